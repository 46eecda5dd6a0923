// Shared helpers for the TF.js round-trip scripts: reading and writing a
// layers-model directory (model.json + weight shards) without tfjs-node, and
// tensors as JSON ({shape, dtype, data}).
'use strict';
const fs = require('fs');
const path = require('path');
const tf = require('@tensorflow/tfjs');

function concatBuffers(weightData) {
  if (!Array.isArray(weightData)) return Buffer.from(weightData);
  return Buffer.concat(weightData.map((b) => Buffer.from(b)));
}

// Saves `model` as dir/model.json + dir/weights.bin (one weights group).
async function saveModel(model, dir) {
  fs.mkdirSync(dir, {recursive: true});
  await model.save(tf.io.withSaveHandler(async (artifacts) => {
    const json = {
      format: artifacts.format,
      generatedBy: artifacts.generatedBy,
      convertedBy: artifacts.convertedBy,
      modelTopology: artifacts.modelTopology,
      weightsManifest: [{paths: ['weights.bin'], weights: artifacts.weightSpecs}],
    };
    fs.writeFileSync(path.join(dir, 'model.json'), JSON.stringify(json));
    fs.writeFileSync(path.join(dir, 'weights.bin'), concatBuffers(artifacts.weightData));
    return {modelArtifactsInfo: {dateSaved: new Date(), modelTopologyType: 'JSON'}};
  }));
}

// Loads a layers-model directory, reading every group's shards in order.
async function loadModel(dir) {
  const json = JSON.parse(fs.readFileSync(path.join(dir, 'model.json'), 'utf8'));
  const specs = [];
  const buffers = [];
  for (const group of json.weightsManifest) {
    for (const p of group.paths) buffers.push(fs.readFileSync(path.join(dir, p)));
    specs.push(...group.weights);
  }
  const all = Buffer.concat(buffers);
  const weightData = all.buffer.slice(all.byteOffset, all.byteOffset + all.byteLength);
  return tf.loadLayersModel({
    load: async () => ({
      modelTopology: json.modelTopology,
      weightSpecs: specs,
      weightData,
      format: json.format,
      generatedBy: json.generatedBy,
      convertedBy: json.convertedBy,
    }),
  });
}

function toJson(t) {
  return {shape: t.shape, dtype: t.dtype, data: Array.from(t.dataSync())};
}

function fromJson(j) {
  const dtype = j.dtype === 'int32' || j.dtype === 'int64' ? 'int32' : 'float32';
  return tf.tensor(j.data, j.shape, dtype);
}

// Predicts and returns the outputs as a list (one per model output).
function predict(model, inputs) {
  const out = model.predict(inputs.length === 1 ? inputs[0] : inputs);
  return Array.isArray(out) ? out : [out];
}

module.exports = {tf, saveModel, loadModel, toJson, fromJson, predict};
