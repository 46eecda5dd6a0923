// Whole-sequence recurrent cells as one differentiable function, on the
// backend's RNN primitive (tensor/ops.h RnnForward). nn/layers/recurrent.h
// uses it when the backend has the primitive and composes the steps
// otherwise.
#pragma once

#include <vector>

#include "nn/autograd.h"
#include "tensor/ops.h"

namespace edl::nn::fn {

// x [N, T, F]; Keras-layout weights: kernel [F, G*U], recurrent [U, G*U],
// bias [G*U] ([2, 3*U], input then recurrent bias, for kGRUResetAfter) or
// undefined for none. reverse runs from the last step to the first and
// returns the steps in that order (Keras go_backwards). Returns
// {every step's h [N, T, U], the last h [N, U]} and, for LSTM, the last
// cell state [N, U].
std::vector<Var> Rnn(tensor::RnnCell cell, bool reverse, const Var& x, const Var& kernel,
                     const Var& recurrent, const Var& bias);

// Whether Rnn can run `cell` for tensors on `device` in this thread.
bool RnnPrimitiveAvailable(tensor::Device device, tensor::RnnCell cell);

}  // namespace edl::nn::fn
