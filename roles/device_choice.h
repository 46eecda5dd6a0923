// ChooseDevice: turns the --device flag (ModelOptions::device) into the
// tensor device a worker or local trainer keeps its parameters and
// activations on. "cuda" loads the CUDA plugin (tensor/device_runtime.h) and
// fails with the reason when it cannot; "auto" falls back to the CPU with a
// log line saying why. A runtime already registered (e.g. a test's
// ScopedDeviceRuntime) counts as available.
#pragma once

#include <string>

#include "base/status.h"
#include "tensor/tensor.h"

namespace edl::roles {

// "cpu", "cuda" or "auto" ("" = "cpu"). InvalidArgument for another value;
// Unavailable (naming the missing plugin, library or driver, and the GPUs
// the driver reports) when "cuda" cannot be used.
Result<tensor::Device> ChooseDevice(const std::string& flag);

}  // namespace edl::roles
