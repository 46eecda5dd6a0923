// Loads a layers-model directory (e.g. one edl exported) with the real
// TF.js and writes its predictions.
//   node predict.js MODEL_DIR INPUTS_JSON OUTPUTS_JSON
// INPUTS_JSON: {"inputs": [{"shape", "dtype", "data"}, ...]} (model input
// order); OUTPUTS_JSON gets {"outputs": [{"shape", "dtype", "data"}, ...]}.
'use strict';
const fs = require('fs');
const {loadModel, toJson, fromJson, predict} = require('./common');

async function main() {
  const [dir, inputsPath, outputsPath] = process.argv.slice(2);
  if (!outputsPath) throw new Error('usage: node predict.js MODEL_DIR INPUTS_JSON OUTPUTS_JSON');
  const model = await loadModel(dir);
  const inputs = JSON.parse(fs.readFileSync(inputsPath, 'utf8')).inputs.map(fromJson);
  const outputs = predict(model, inputs).map(toJson);
  fs.writeFileSync(outputsPath, JSON.stringify({outputs}));
}

main().catch((e) => {
  console.error(`predict.js: ${e.stack || e}`);
  process.exit(1);
});
