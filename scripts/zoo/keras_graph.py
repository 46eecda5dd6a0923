"""Helpers for the zoo generators (mobilenet_v2.py, resnet50.py): a Keras 2
functional model's layer list built call by call."""
import json


class Graph:
    def __init__(self):
        self.layers = []

    def add(self, cls, name, config, inputs):
        """Appends layer `name` called on the layers named in `inputs`."""
        config = dict(config, name=name)
        self.layers.append({"name": name, "class_name": cls, "config": config,
                            "inbound_nodes": [[[i, 0, 0, {}] for i in inputs]] if inputs else []})
        return name

    def conv_bn(self, x, name, filters, kernel, stride=1, relu=None, bn=None):
        """Conv2D ("same", no bias) -> BatchNormalization(bn) -> ReLU(relu),
        the ReLU left out when relu is None."""
        x = self.add("Conv2D", name, {"filters": filters, "kernel_size": [kernel, kernel],
                                      "strides": [stride, stride], "padding": "same",
                                      "use_bias": False}, [x])
        x = self.add("BatchNormalization", name + "_bn", bn, [x])
        return self.add("ReLU", name + "_relu", relu, [x]) if relu is not None else x

    def spec(self, name, output, optimizer):
        """The model spec edl reads, for [32, 32, 3] IDX images and 10 classes."""
        return json.dumps({
            "model": {"class_name": "Functional",
                      "config": {"name": name, "layers": self.layers,
                                 "input_layers": [["image", 0, 0]],
                                 "output_layers": [[output, 0, 0]]}},
            "loss": {"class_name": "SparseCategoricalCrossentropy",
                     "config": {"from_logits": True}},
            "optimizer": optimizer,
            "metrics": ["accuracy"],
            "input": {"format": "idx", "scale": 1 / 255},
        }, separators=(", ", ": "))
