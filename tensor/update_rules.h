// Update rules: the per-element arithmetic of every optimizer update
// (nn/optim/), shared by the backends' ApplyUpdate (tensor/backend.h) so the
// reference loops, the CPU backend and the CUDA kernel run the same
// expressions. Each rule reads one element's value, gradient and slots and
// a small POD of per-step coefficients computed on the host (bias
// corrections, Nadam's momentum schedule, ...), and writes the value and
// slots in place. Every update is elementwise, so a sparse update is the
// dense update restricted to some rows.
//
// Plain C++17 with no edl dependency: this header is compiled by g++ and by
// nvcc (__host__ __device__). The maths and references are in the
// optimizers' headers (nn/optim/<optimizer>.h).
#pragma once

#include <cmath>
#include <cstdint>

#ifdef __CUDACC__
#define EDL_HD __host__ __device__
#else
#define EDL_HD
#endif

namespace edl::tensor {

// The slots each rule reads and writes, in order (as nn/optim's SlotSpecs).
enum class UpdateRule {
  kSgd,                      // none
  kSgdMomentum,              // momentum
  kSgdNesterov,              // momentum
  kAdam,                     // m, v
  kAmsgrad,                  // m, v, vhat
  kAdamax,                   // m, v
  kNadam,                    // m, v
  kAdagrad,                  // accumulator
  kAdadelta,                 // accum_grad, accum_var
  kRmsprop,                  // rms
  kRmspropCentered,          // rms, mg
  kRmspropMomentum,          // rms, momentum
  kRmspropMomentumCentered,  // rms, momentum, mg
  kFtrl,                     // accumulator, linear (n^power via pow)
  kFtrlSqrt,                 // accumulator, linear (power 0.5 via sqrt)
};
inline constexpr int kMaxUpdateSlots = 3;

// How many slots `rule` keeps.
EDL_HD constexpr int UpdateSlotCount(UpdateRule rule) {
  switch (rule) {
    case UpdateRule::kSgd: return 0;
    case UpdateRule::kSgdMomentum:
    case UpdateRule::kSgdNesterov:
    case UpdateRule::kAdagrad:
    case UpdateRule::kRmsprop: return 1;
    case UpdateRule::kAmsgrad:
    case UpdateRule::kRmspropMomentumCentered: return 3;
    default: return 2;
  }
}
const char* UpdateRuleName(UpdateRule rule);  // tensor/ops_optim.cc

// Per-step coefficients, computed on the host in float exactly as each rule
// documents; a rule reads only its own fields (the others stay 0).
struct UpdateCoefficients {
  float lr = 0;  // SGD, Adagrad, Adadelta, RMSprop, Nadam, FTRL;
                 // Adam, Adamax: the bias-corrected lr_t
  float epsilon = 0;
  float momentum = 0;          // SGD, RMSprop
  float beta_1 = 0;            // Nadam
  float one_minus_beta_1 = 0;  // Adam, Adamax, Nadam
  float beta_2 = 0;            // Adamax, Nadam
  float one_minus_beta_2 = 0;  // Adam, Nadam
  float rho = 0;               // Adadelta, RMSprop
  float one_minus_rho = 0;     // Adadelta, RMSprop
  float grad_scale = 0;        // Nadam: (1 - mu_t) / (1 - S_t)
  float m_scale = 0;           // Nadam: mu_{t+1} / (1 - S_t * mu_{t+1})
  float v_scale = 0;           // Nadam: 1 / (1 - beta_2^t)
  float inv_lr = 0;            // FTRL: 1 / lr
  float l1 = 0;                // FTRL
  float two_l2 = 0;            // FTRL: 2 * (l2 + beta / (2 * lr))
  float two_shrinkage = 0;     // FTRL: 2 * l2_shrinkage
  float power = 0;             // FTRL: -learning_rate_power
};

namespace update_math {

// As std::max / std::min (the first argument wins ties and NaN compares).
EDL_HD inline float Max(float a, float b) { return a < b ? b : a; }
EDL_HD inline float Min(float a, float b) { return b < a ? b : a; }
EDL_HD inline float Sqrt(float x) {
#ifdef __CUDA_ARCH__
  return sqrtf(x);
#else
  return std::sqrt(x);
#endif
}
EDL_HD inline float Pow(float x, float y) {
#ifdef __CUDA_ARCH__
  return powf(x, y);
#else
  return std::pow(x, y);
#endif
}
EDL_HD inline float Abs(float x) {
#ifdef __CUDA_ARCH__
  return fabsf(x);
#else
  return std::fabs(x);
#endif
}

}  // namespace update_math

// ---- One element per rule (w: value, g: gradient, then the slots) -------

EDL_HD inline void SgdElement(const UpdateCoefficients& c, float& w, float g) { w -= c.lr * g; }

EDL_HD inline void SgdMomentumElement(const UpdateCoefficients& c, float& w, float g, float& a) {
  a = a * c.momentum - c.lr * g;
  w += a;
}

EDL_HD inline void SgdNesterovElement(const UpdateCoefficients& c, float& w, float g, float& a) {
  a = a * c.momentum - c.lr * g;
  w += a * c.momentum - c.lr * g;
}

EDL_HD inline void AdamElement(const UpdateCoefficients& c, float& w, float g, float& m, float& v) {
  m += (g - m) * c.one_minus_beta_1;
  v += (g * g - v) * c.one_minus_beta_2;
  w -= c.lr * m / (update_math::Sqrt(v) + c.epsilon);
}

EDL_HD inline void AmsgradElement(const UpdateCoefficients& c, float& w, float g, float& m,
                                  float& v, float& vhat) {
  m += (g - m) * c.one_minus_beta_1;
  v += (g * g - v) * c.one_minus_beta_2;
  vhat = update_math::Max(vhat, v);
  w -= c.lr * m / (update_math::Sqrt(vhat) + c.epsilon);
}

EDL_HD inline void AdamaxElement(const UpdateCoefficients& c, float& w, float g, float& m,
                                 float& v) {
  m += (g - m) * c.one_minus_beta_1;
  v = update_math::Max(c.beta_2 * v, update_math::Abs(g));
  w -= c.lr * (m / (v + c.epsilon));
}

EDL_HD inline void NadamElement(const UpdateCoefficients& c, float& w, float g, float& m,
                                float& v) {
  m = c.beta_1 * m + c.one_minus_beta_1 * g;
  v = c.beta_2 * v + c.one_minus_beta_2 * g * g;
  const float m_bar = c.grad_scale * g + c.m_scale * m;
  w -= c.lr * m_bar / (update_math::Sqrt(v * c.v_scale) + c.epsilon);
}

EDL_HD inline void AdagradElement(const UpdateCoefficients& c, float& w, float g, float& accum) {
  accum += g * g;
  w -= c.lr * g / (update_math::Sqrt(accum) + c.epsilon);
}

EDL_HD inline void AdadeltaElement(const UpdateCoefficients& c, float& w, float g, float& accum,
                                   float& accum_update) {
  accum = accum * c.rho + g * g * c.one_minus_rho;
  const float u =
      update_math::Sqrt(accum_update + c.epsilon) / update_math::Sqrt(accum + c.epsilon) * g;
  w -= u * c.lr;
  accum_update = accum_update * c.rho + u * u * c.one_minus_rho;
}

EDL_HD inline void RmspropElement(const UpdateCoefficients& c, float& w, float g, float& rms) {
  rms = c.rho * rms + c.one_minus_rho * g * g;
  w -= c.lr * g / (update_math::Sqrt(rms) + c.epsilon);
}

EDL_HD inline void RmspropCenteredElement(const UpdateCoefficients& c, float& w, float g,
                                          float& rms, float& mg) {
  rms = c.rho * rms + c.one_minus_rho * g * g;
  mg = c.rho * mg + c.one_minus_rho * g;
  w -= c.lr * g / (update_math::Sqrt(rms - mg * mg) + c.epsilon);
}

EDL_HD inline void RmspropMomentumElement(const UpdateCoefficients& c, float& w, float g,
                                          float& rms, float& mom) {
  rms += (g * g - rms) * c.one_minus_rho;
  mom = c.momentum * mom + c.lr * g / update_math::Sqrt(rms + c.epsilon);
  w -= mom;
}

EDL_HD inline void RmspropMomentumCenteredElement(const UpdateCoefficients& c, float& w, float g,
                                                  float& rms, float& mom, float& mg) {
  rms += (g * g - rms) * c.one_minus_rho;
  mg += (g - mg) * c.one_minus_rho;
  mom = c.momentum * mom + c.lr * g / update_math::Sqrt(rms - mg * mg + c.epsilon);
  w -= mom;
}

// kSqrt: power 0.5 (learning_rate_power -0.5, the default) through sqrt.
template <bool kSqrt>
EDL_HD inline void FtrlElement(const UpdateCoefficients& c, float& w, float g, float& accum,
                               float& linear) {
  const float g_shrunk = g + c.two_shrinkage * w;
  const float new_accum = accum + g * g;
  float new_root, old_root;
  if constexpr (kSqrt) {
    new_root = update_math::Sqrt(new_accum);
    old_root = update_math::Sqrt(accum);
  } else {
    new_root = update_math::Pow(new_accum, c.power);
    old_root = update_math::Pow(accum, c.power);
  }
  linear += g_shrunk - (new_root - old_root) * c.inv_lr * w;
  const float z = linear;
  const float x = update_math::Min(update_math::Max(z, -c.l1), c.l1) - z;
  w = x / (new_root * c.inv_lr + c.two_l2);
  accum = new_accum;
}

// Rule R on element i of the value and slots, with gradient element gi.
// Slot pointers past UpdateSlotCount(R) are not read (may be null).
template <UpdateRule R>
EDL_HD inline void UpdateElement(const UpdateCoefficients& c, float* w, const float* g, float* s0,
                                 float* s1, float* s2, int64_t i, int64_t gi) {
  if constexpr (R == UpdateRule::kSgd) {
    SgdElement(c, w[i], g[gi]);
  } else if constexpr (R == UpdateRule::kSgdMomentum) {
    SgdMomentumElement(c, w[i], g[gi], s0[i]);
  } else if constexpr (R == UpdateRule::kSgdNesterov) {
    SgdNesterovElement(c, w[i], g[gi], s0[i]);
  } else if constexpr (R == UpdateRule::kAdam) {
    AdamElement(c, w[i], g[gi], s0[i], s1[i]);
  } else if constexpr (R == UpdateRule::kAmsgrad) {
    AmsgradElement(c, w[i], g[gi], s0[i], s1[i], s2[i]);
  } else if constexpr (R == UpdateRule::kAdamax) {
    AdamaxElement(c, w[i], g[gi], s0[i], s1[i]);
  } else if constexpr (R == UpdateRule::kNadam) {
    NadamElement(c, w[i], g[gi], s0[i], s1[i]);
  } else if constexpr (R == UpdateRule::kAdagrad) {
    AdagradElement(c, w[i], g[gi], s0[i]);
  } else if constexpr (R == UpdateRule::kAdadelta) {
    AdadeltaElement(c, w[i], g[gi], s0[i], s1[i]);
  } else if constexpr (R == UpdateRule::kRmsprop) {
    RmspropElement(c, w[i], g[gi], s0[i]);
  } else if constexpr (R == UpdateRule::kRmspropCentered) {
    RmspropCenteredElement(c, w[i], g[gi], s0[i], s1[i]);
  } else if constexpr (R == UpdateRule::kRmspropMomentum) {
    RmspropMomentumElement(c, w[i], g[gi], s0[i], s1[i]);
  } else if constexpr (R == UpdateRule::kRmspropMomentumCentered) {
    RmspropMomentumCenteredElement(c, w[i], g[gi], s0[i], s1[i], s2[i]);
  } else if constexpr (R == UpdateRule::kFtrl) {
    FtrlElement<false>(c, w[i], g[gi], s0[i], s1[i]);
  } else {
    static_assert(R == UpdateRule::kFtrlSqrt);
    FtrlElement<true>(c, w[i], g[gi], s0[i], s1[i]);
  }
}

// Calls f.template operator()<R>() with R = rule (a compile-time constant),
// so a backend writes one loop template and gets one instance per rule.
template <typename F>
inline void DispatchUpdateRule(UpdateRule rule, F&& f) {
  switch (rule) {
    case UpdateRule::kSgd: f.template operator()<UpdateRule::kSgd>(); return;
    case UpdateRule::kSgdMomentum: f.template operator()<UpdateRule::kSgdMomentum>(); return;
    case UpdateRule::kSgdNesterov: f.template operator()<UpdateRule::kSgdNesterov>(); return;
    case UpdateRule::kAdam: f.template operator()<UpdateRule::kAdam>(); return;
    case UpdateRule::kAmsgrad: f.template operator()<UpdateRule::kAmsgrad>(); return;
    case UpdateRule::kAdamax: f.template operator()<UpdateRule::kAdamax>(); return;
    case UpdateRule::kNadam: f.template operator()<UpdateRule::kNadam>(); return;
    case UpdateRule::kAdagrad: f.template operator()<UpdateRule::kAdagrad>(); return;
    case UpdateRule::kAdadelta: f.template operator()<UpdateRule::kAdadelta>(); return;
    case UpdateRule::kRmsprop: f.template operator()<UpdateRule::kRmsprop>(); return;
    case UpdateRule::kRmspropCentered:
      f.template operator()<UpdateRule::kRmspropCentered>();
      return;
    case UpdateRule::kRmspropMomentum:
      f.template operator()<UpdateRule::kRmspropMomentum>();
      return;
    case UpdateRule::kRmspropMomentumCentered:
      f.template operator()<UpdateRule::kRmspropMomentumCentered>();
      return;
    case UpdateRule::kFtrl: f.template operator()<UpdateRule::kFtrl>(); return;
    case UpdateRule::kFtrlSqrt: f.template operator()<UpdateRule::kFtrlSqrt>(); return;
  }
}

}  // namespace edl::tensor
