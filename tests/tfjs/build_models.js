// Builds reference models with the real TF.js, randomizes every weight
// (including BatchNormalization's moving statistics), and saves each as a
// layers-model with its inputs and TF.js' predictions:
//   node build_models.js OUT_DIR [NAME ...]
// (all models, or only those named) writes OUT_DIR/index.json (["name", ...]) and per model
// OUT_DIR/NAME/{model.json, weights.bin, io.json}; io.json is
// {"inputs": [{"shape", "dtype", "data"}], "outputs": [...]}.
'use strict';
const fs = require('fs');
const path = require('path');
const {tf, saveModel, toJson, predict} = require('./common');

// Deterministic randomness (mulberry32 + Box-Muller).
let state = 12345;
function uniform() {
  state = (state + 0x6d2b79f5) | 0;
  let t = Math.imul(state ^ (state >>> 15), 1 | state);
  t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
}
function normal() {
  return Math.sqrt(-2 * Math.log(uniform() + 1e-12)) * Math.cos(2 * Math.PI * uniform());
}
function randomTensor(shape, dtype, maxId) {
  const n = shape.reduce((a, b) => a * b, 1);
  const data = [];
  for (let i = 0; i < n; ++i) data.push(maxId ? Math.floor(uniform() * maxId) : normal());
  return tf.tensor(data, shape, dtype);
}

function randomizeWeights(model) {
  const values = model.weights.map((w) => {
    const n = w.shape.reduce((a, b) => a * b, 1);
    const data = [];
    for (let i = 0; i < n; ++i) {
      data.push(w.originalName.endsWith('moving_variance') ? 0.5 + uniform() : 0.5 * normal());
    }
    return tf.tensor(data, w.shape);
  });
  model.setWeights(values);
}

const L = tf.layers;
const builders = {
  seq_dense() {
    const m = tf.sequential();
    m.add(L.dense({units: 8, activation: 'relu', inputShape: [5]}));
    m.add(L.dense({units: 3, activation: 'softmax'}));
    return {model: m, inputs: [[4, 5]]};
  },
  seq_conv() {
    const m = tf.sequential();
    m.add(L.conv2d({filters: 4, kernelSize: 3, strides: 2, padding: 'same',
                    activation: 'relu', inputShape: [16, 16, 2]}));
    m.add(L.batchNormalization());
    m.add(L.conv2d({filters: 3, kernelSize: [3, 2], dilationRate: 2, activation: 'elu'}));
    m.add(L.maxPooling2d({poolSize: 2, strides: 1, padding: 'same'}));
    m.add(L.averagePooling2d({poolSize: 3, strides: 2, padding: 'same'}));
    m.add(L.flatten());
    m.add(L.dense({units: 6, activation: 'selu'}));
    m.add(L.dense({units: 5, activation: 'softsign'}));
    m.add(L.dense({units: 4, activation: 'mish'}));
    return {model: m, inputs: [[3, 16, 16, 2]]};
  },
  seq_norm() {
    const m = tf.sequential();
    m.add(L.dense({units: 8, inputShape: [6]}));
    m.add(L.batchNormalization({epsilon: 0.01}));
    m.add(L.layerNormalization());
    m.add(L.activation({activation: 'gelu'}));
    m.add(L.dense({units: 3, activation: 'softplus'}));
    m.add(L.reLU({maxValue: 0.8}));
    return {model: m, inputs: [[5, 6]]};
  },
  seq_embedding() {
    const m = tf.sequential();
    m.add(L.embedding({inputDim: 20, outputDim: 4, inputShape: [3]}));
    m.add(L.flatten());
    m.add(L.dense({units: 2, activation: 'swish'}));
    m.add(L.softmax());
    return {model: m, inputs: [[4, 3, 20]]};
  },
  functional() {
    const a = tf.input({shape: [4], name: 'a'});
    const b = tf.input({shape: [4], name: 'b'});
    const ids = tf.input({shape: [2], name: 'ids', dtype: 'int32'});
    const shared = L.dense({units: 4, activation: 'tanh', name: 'shared'});
    const da = shared.apply(a);
    const db = shared.apply(b);
    const cat = L.concatenate().apply([da, db]);
    const sum = L.add().apply([da, db]);
    const prod = L.multiply().apply([a, b]);
    const emb = L.flatten().apply(L.embedding({inputDim: 10, outputDim: 3}).apply(ids));
    const all = L.concatenate({axis: -1}).apply([cat, sum, prod, emb]);
    const out1 = L.dense({units: 2, activation: 'sigmoid', name: 'out1'}).apply(all);
    const out2 = L.dense({units: 1, name: 'out2'}).apply(sum);
    return {model: tf.model({inputs: [a, b, ids], outputs: [out1, out2]}),
            inputs: [[3, 4], [3, 4], [3, 2, 10]]};
  },
  nested_models() {
    // Transfer learning: a functional base (convolution, batch norm) that is
    // frozen and called on two inputs (one set of weights), and two
    // Sequentials (TF.js wants their input shapes; Keras does not:
    // tests/nn/keras/nested_model_test.cc).
    const baseIn = tf.input({shape: [6, 6, 2], name: 'base_in'});
    let h = L.conv2d({filters: 3, kernelSize: 3, name: 'base_conv'}).apply(baseIn);
    h = L.batchNormalization({name: 'base_bn'}).apply(h);
    h = L.globalAveragePooling2d({name: 'base_pool'}).apply(h);
    const base = tf.model({inputs: baseIn, outputs: h, name: 'base'});
    base.trainable = false;
    const head = tf.sequential({name: 'head', layers: [
      L.dense({units: 4, activation: 'relu', inputShape: [6], name: 'head_dense'}),
      L.dense({units: 3, name: 'head_out'})]});
    const tail = tf.sequential({name: 'tail', layers: [L.dense({units: 2, inputShape: [3], name: 'tail_dense'})]});
    const a = tf.input({shape: [6, 6, 2], name: 'a'});
    const b = tf.input({shape: [6, 6, 2], name: 'b'});
    const both = L.concatenate({name: 'both'}).apply([base.apply(a), base.apply(b)]);
    const out = tail.apply(head.apply(both));
    return {model: tf.model({inputs: [a, b], outputs: out, name: 'transfer'}),
            inputs: [[2, 6, 6, 2], [2, 6, 6, 2]]};
  },
  merging_activations() {
    const a = tf.input({shape: [6], name: 'a'});
    const b = tf.input({shape: [6], name: 'b'});
    const da = L.dense({units: 5, name: 'da'}).apply(a);
    const db = L.dense({units: 5, name: 'db'}).apply(b);
    const avg = L.average().apply([da, db]);
    const max = L.maximum().apply([da, db, avg]);
    const min = L.minimum().apply([da, db]);
    const leaky = L.leakyReLU({alpha: 0.2}).apply(max);
    const elu = L.elu().apply(min);
    const prelu = L.prelu({alphaInitializer: 'ones'}).apply(L.concatenate().apply([leaky, elu]));
    const shared = L.prelu({sharedAxes: [1]}).apply(L.reshape({targetShape: [2, 5]}).apply(prelu));
    const out = L.dense({units: 3}).apply(L.flatten().apply(shared));
    return {model: tf.model({inputs: [a, b], outputs: out}), inputs: [[4, 6], [4, 6]]};
  },
  dot_thresholded() {
    const a = tf.input({shape: [4, 3], name: 'a'});
    const b = tf.input({shape: [4, 5], name: 'b'});
    const v = tf.input({shape: [6], name: 'v'});
    const w = tf.input({shape: [6], name: 'w'});
    const m = L.dot({axes: 1}).apply([a, b]);
    const cos = L.dot({axes: -1, normalize: true}).apply([v, w]);
    const t = L.thresholdedReLU({theta: 0.3}).apply(L.flatten().apply(m));
    const out = L.concatenate().apply([t, cos]);
    return {model: tf.model({inputs: [a, b, v, w], outputs: out}),
            inputs: [[2, 4, 3], [2, 4, 5], [2, 6], [2, 6]]};
  },
  conv1d() {
    const m = tf.sequential();
    m.add(L.conv1d({filters: 4, kernelSize: 3, padding: 'valid', dilationRate: 2,
                    activation: 'relu', inputShape: [12, 3]}));
    m.add(L.maxPooling1d({poolSize: 2}));
    m.add(L.conv1d({filters: 5, kernelSize: 2, strides: 2, padding: 'same'}));
    m.add(L.averagePooling1d({poolSize: 2, padding: 'same'}));
    m.add(L.globalAveragePooling1d());
    m.add(L.dense({units: 3}));
    return {model: m, inputs: [[3, 12, 3]]};
  },
  conv3d() {
    const m = tf.sequential();
    m.add(L.conv3d({filters: 3, kernelSize: [2, 3, 2], strides: [2, 1, 2], padding: 'same',
                    activation: 'relu', inputShape: [6, 8, 9, 2]}));
    m.add(L.maxPooling3d({poolSize: 2, padding: 'same'}));
    m.add(L.conv3d({filters: 2, kernelSize: 2}));
    m.add(L.averagePooling3d({poolSize: [1, 2, 2], strides: 1, padding: 'same'}));
    m.add(L.flatten());
    m.add(L.dense({units: 3}));
    return {model: m, inputs: [[2, 6, 8, 9, 2]]};
  },
  rnn_cells() {
    const m = tf.sequential();
    m.add(L.rnn({cell: L.lstmCell({units: 3}), returnSequences: true, inputShape: [5, 2]}));
    m.add(L.rnn({cell: [L.gruCell({units: 2}), L.simpleRNNCell({units: 2, activation: 'relu'})],
                 goBackwards: true}));
    m.add(L.dense({units: 2}));
    return {model: m, inputs: [[3, 5, 2]]};
  },
  conv3d_transpose() {
    const m = tf.sequential();
    m.add(L.conv3dTranspose({filters: 2, kernelSize: [2, 3, 2], strides: [2, 1, 2],
                             padding: 'same', inputShape: [3, 4, 3, 2]}));
    m.add(L.conv3dTranspose({filters: 3, kernelSize: 2, activation: 'relu'}));
    m.add(L.flatten());
    m.add(L.dense({units: 2}));
    return {model: m, inputs: [[2, 3, 4, 3, 2]]};
  },
  conv1d_global_max() {
    const x = tf.input({shape: [8, 2]});
    const c = L.conv1d({filters: 3, kernelSize: 2, padding: 'valid'}).apply(x);
    const out = L.dense({units: 2}).apply(L.globalMaxPooling1d().apply(c));
    return {model: tf.model({inputs: x, outputs: out}), inputs: [[2, 8, 2]]};
  },
  reshaping() {
    const m = tf.sequential();
    m.add(L.rescaling({scale: 0.5, offset: -0.25, inputShape: [5, 6, 2]}));
    m.add(L.zeroPadding2d({padding: [[1, 0], [0, 2]]}));
    m.add(L.conv2d({filters: 3, kernelSize: 2}));
    m.add(L.upSampling2d({size: [2, 1]}));
    m.add(L.cropping2D({cropping: [[1, 2], [0, 1]]}));
    m.add(L.flatten());
    m.add(L.dense({units: 4}));
    m.add(L.repeatVector({n: 3}));
    m.add(L.flatten());
    m.add(L.dense({units: 2}));
    return {model: m, inputs: [[2, 5, 6, 2]]};
  },
  noise() {
    const m = tf.sequential();
    m.add(L.gaussianNoise({stddev: 0.3, inputShape: [6, 4]}));
    m.add(L.spatialDropout1d({rate: 0.3}));
    m.add(L.conv1d({filters: 3, kernelSize: 2}));
    m.add(L.flatten());
    m.add(L.gaussianDropout({rate: 0.2}));
    m.add(L.dense({units: 4, activation: 'selu'}));
    m.add(L.alphaDropout({rate: 0.1}));
    m.add(L.dense({units: 2}));
    return {model: m, inputs: [[3, 6, 4]]};
  },
  conv_transpose() {
    const m = tf.sequential();
    m.add(L.conv2dTranspose({filters: 3, kernelSize: 3, strides: 2, padding: 'same',
                             inputShape: [4, 5, 2]}));
    m.add(L.conv2dTranspose({filters: 2, kernelSize: [2, 3], activation: 'relu'}));
    m.add(L.conv2dTranspose({filters: 2, kernelSize: 3, strides: [1, 2], useBias: false}));
    m.add(L.flatten());
    m.add(L.dense({units: 2}));
    return {model: m, inputs: [[2, 4, 5, 2]]};
  },
  // Keras' output length in * stride + max(kernel - stride, 0) for a stride
  // wider than the kernel, and a Reshape whose -1 TF.js saves as null.
  conv_transpose_wide_stride() {
    const m = tf.sequential();
    m.add(L.conv2dTranspose({filters: 2, kernelSize: 2, strides: 3, inputShape: [2, 3, 2]}));
    m.add(L.conv2dTranspose({filters: 2, kernelSize: [1, 2], strides: [2, 3], padding: 'same',
                             activation: 'relu'}));
    m.add(L.reshape({targetShape: [-1, 4]}));
    m.add(L.conv1d({filters: 3, kernelSize: 3}));
    m.add(L.globalMaxPooling1d());  // (TF.js leaves the inferred length unknown)
    m.add(L.dense({units: 2}));
    return {model: m, inputs: [[2, 2, 3, 2]]};
  },
  // (Not with `same` padding: for a stride wider than the kernel TF.js' 3-D
  // padding goes negative, where its 2-D padding and TensorFlow's stop at 0.)
  conv3d_transpose_wide_stride() {
    const m = tf.sequential();
    m.add(L.conv3dTranspose({filters: 2, kernelSize: [1, 2, 1], strides: [2, 3, 2],
                             inputShape: [2, 2, 3, 1]}));
    m.add(L.conv3dTranspose({filters: 1, kernelSize: [2, 1, 3], strides: [3, 2, 2]}));
    m.add(L.flatten());
    m.add(L.dense({units: 2}));
    return {model: m, inputs: [[2, 2, 2, 3, 1]]};
  },
  global_pooling() {
    const x = tf.input({shape: [5, 6, 3]});
    const c = L.conv2d({filters: 4, kernelSize: 1, activation: 'sigmoid'}).apply(x);
    const avg = L.globalAveragePooling2d({}).apply(c);
    const max = L.globalMaxPooling2d({}).apply(c);
    const out = L.dense({units: 3, activation: 'softmax'}).apply(L.concatenate().apply([avg, max]));
    return {model: tf.model({inputs: x, outputs: out}), inputs: [[2, 5, 6, 3]]};
  },
  // TF.js' default recurrent activation is hard_sigmoid (edl composes the
  // steps); sigmoid gates run on edl's oneDNN RNN primitive.
  recurrent() {
    const m = tf.sequential();
    m.add(L.lstm({units: 4, returnSequences: true, inputShape: [6, 3]}));
    m.add(L.gru({units: 3, returnSequences: true, goBackwards: true}));
    m.add(L.simpleRNN({units: 2, activation: 'relu'}));
    m.add(L.dense({units: 2}));
    return {model: m, inputs: [[3, 6, 3]]};
  },
  recurrent_sigmoid() {
    const x = tf.input({shape: [7, 2]});
    const a = L.lstm({units: 3, recurrentActivation: 'sigmoid', returnSequences: true}).apply(x);
    const b = L.gru({units: 4, recurrentActivation: 'sigmoid', goBackwards: true}).apply(a);
    const c = L.simpleRNN({units: 2}).apply(x);
    const [, h, cell] = L.lstm({units: 2, recurrentActivation: 'sigmoid', returnState: true}).apply(x);
    const out = L.dense({units: 3}).apply(L.concatenate().apply([b, c, h, cell]));
    return {model: tf.model({inputs: x, outputs: out}), inputs: [[2, 7, 2]]};
  },
  wrappers() {
    const x = tf.input({shape: [5, 3]});
    const seq = L.bidirectional({layer: L.lstm({units: 3, returnSequences: true}),
                                 mergeMode: 'concat'}).apply(x);
    const steps = L.timeDistributed({layer: L.dense({units: 2, activation: 'tanh'})}).apply(seq);
    const sum = L.bidirectional({layer: L.gru({units: 2, recurrentActivation: 'sigmoid'}),
                                 mergeMode: 'sum'}).apply(steps);
    const ave = L.bidirectional({layer: L.simpleRNN({units: 2, goBackwards: true}),
                                 mergeMode: 'ave'}).apply(x);
    const mul = L.bidirectional({layer: L.lstm({units: 2, recurrentActivation: 'sigmoid'}),
                                 mergeMode: 'mul'}).apply(x);
    const out = L.dense({units: 2}).apply(L.concatenate().apply([sum, ave, mul]));
    return {model: tf.model({inputs: x, outputs: out}), inputs: [[2, 5, 3]]};
  },
  permute() {
    const m = tf.sequential();
    m.add(L.permute({dims: [2, 1], inputShape: [4, 3]}));
    m.add(L.dense({units: 2, activation: 'tanh'}));
    m.add(L.permute({dims: [2, 1]}));
    m.add(L.flatten());
    return {model: m, inputs: [[2, 4, 3]]};
  },
  grouped_conv() {
    const m = tf.sequential();
    m.add(L.depthwiseConv2d({kernelSize: 3, depthMultiplier: 2, strides: 2, padding: 'same',
                             activation: 'relu', inputShape: [7, 6, 3]}));
    m.add(L.separableConv2d({filters: 4, kernelSize: [3, 2], depthMultiplier: 1}));
    m.add(L.depthwiseConv2d({kernelSize: 2, useBias: false, dilationRate: 1}));
    m.add(L.flatten());
    m.add(L.dense({units: 2}));
    return {model: m, inputs: [[2, 7, 6, 3]]};
  },
  // Masks: id 0 is padding (after, before and inside the sequences).
  masked_embedding() {
    const ids = tf.input({shape: [6], dtype: 'int32'});
    const e = L.embedding({inputDim: 10, outputDim: 3, maskZero: true}).apply(ids);
    const seq = L.bidirectional({layer: L.lstm({units: 2, recurrentActivation: 'sigmoid',
                                                returnSequences: true})}).apply(e);
    const last = L.gru({units: 3}).apply(seq);
    const out = L.dense({units: 2}).apply(last);
    const x = tf.tensor2d([[3, 1, 4, 1, 5, 9], [2, 6, 5, 0, 0, 0], [0, 0, 7, 1, 8, 2],
                           [4, 0, 3, 0, 0, 0]], [4, 6], 'int32');
    return {model: tf.model({inputs: ids, outputs: out}), inputs: [x]};
  },
  masking_layer() {
    const x = tf.input({shape: [5, 2]});
    const m = L.masking({maskValue: 0}).apply(x);
    const s = L.simpleRNN({units: 3, returnSequences: true}).apply(m);
    const h = L.lstm({units: 2, recurrentActivation: 'sigmoid'}).apply(s);
    const values = randomTensor([3, 5, 2], 'float32', 0).mul(
        tf.tensor([1, 1, 1, 0, 0, 0, 1, 1, 1, 1, 1, 0, 1, 1, 0], [3, 5, 1]));
    return {model: tf.model({inputs: x, outputs: h}), inputs: [values]};
  },
};

async function main() {
  const out = process.argv[2];
  if (!out) throw new Error('usage: node build_models.js OUT_DIR [NAME ...]');
  const only = process.argv.slice(3);
  for (const name of only) {
    if (!(name in builders)) throw new Error(`no model named ${name}`);
  }
  fs.mkdirSync(out, {recursive: true});
  const names = [];
  for (const [name, build] of Object.entries(builders)) {
    if (only.length && !only.includes(name)) continue;
    const {model, inputs} = build();
    randomizeWeights(model);
    const xs = inputs.map((spec, i) => {
      if (spec instanceof tf.Tensor) return spec;  // given values
      const input = model.inputs[i];
      const maxId = spec.length > input.shape.length ? spec[spec.length - 1] : 0;
      const shape = maxId ? spec.slice(0, -1) : spec;
      return randomTensor(shape, input.dtype, maxId);
    });
    const ys = predict(model, xs);
    const dir = path.join(out, name);
    await saveModel(model, dir);
    fs.writeFileSync(path.join(dir, 'io.json'),
                     JSON.stringify({inputs: xs.map(toJson), outputs: ys.map(toJson)}));
    names.push(name);
  }
  fs.writeFileSync(path.join(out, 'index.json'), JSON.stringify(names));
}

main().catch((e) => {
  console.error(`build_models.js: ${e.stack || e}`);
  process.exit(1);
});
