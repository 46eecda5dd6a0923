#include "roles/worker/training_state.h"

#include <cstring>
#include <map>
#include <set>

#include "roles/local/checkpoint.h"

namespace edl::roles::worker {
namespace {

constexpr char kMagic[4] = {'E', 'D', 'L', 'S'};
constexpr uint32_t kFormat = 1;
constexpr uint32_t kMaxRank = 8;

template <typename T>
void Put(std::string* out, T v) {
  out->append(reinterpret_cast<const char*>(&v), sizeof v);
}

void PutTensor(std::string* out, uint8_t group, const NamedTensor& t) {
  Put(out, group);
  Put(out, static_cast<uint32_t>(t.name.size()));
  out->append(t.name);
  Put(out, static_cast<uint32_t>(t.value.rank()));
  for (int64_t d : t.value.shape()) Put(out, d);
  out->append(reinterpret_cast<const char*>(t.value.f32()), t.value.bytes());
}

class Reader {
 public:
  explicit Reader(std::string_view bytes) : bytes_(bytes) {}

  template <typename T>
  bool Get(T* v) {
    if (bytes_.size() - pos_ < sizeof(T)) return false;
    std::memcpy(v, bytes_.data() + pos_, sizeof(T));
    pos_ += sizeof(T);
    return true;
  }
  bool Take(size_t n, std::string_view* out) {
    if (bytes_.size() - pos_ < n) return false;
    *out = bytes_.substr(pos_, n);
    pos_ += n;
    return true;
  }
  bool done() const { return pos_ == bytes_.size(); }
  size_t pos() const { return pos_; }

 private:
  std::string_view bytes_;
  size_t pos_ = 0;
};

Status Truncated(const Reader& r) {
  return InvalidArgument("training state: truncated at byte " + std::to_string(r.pos()));
}

// Every weight of the model exactly once with its shape, and every slot
// "<weight>/<slot>" shaped like its weight, so that restoring cannot fail
// half-way.
Status CheckFits(const Checkpoint& c, const CompiledModel& cm) {
  std::map<std::string, const tensor::Shape*> weights;
  for (const nn::Parameter* p : cm.model->parameters()) weights[p->name] = &p->value.shape();
  std::set<std::string> seen;
  for (const NamedTensor& t : c.model) {
    auto it = weights.find(t.name);
    if (it == weights.end()) {
      return InvalidArgument("training state: weight \"" + t.name + "\" is not in the model");
    }
    if (*it->second != t.value.shape()) {
      return InvalidArgument("training state: weight \"" + t.name + "\" has shape " +
                             tensor::ShapeString(t.value.shape()) + ", the model's is " +
                             tensor::ShapeString(*it->second));
    }
    if (!seen.insert(t.name).second) {
      return InvalidArgument("training state: weight \"" + t.name + "\" appears twice");
    }
  }
  if (seen.size() != weights.size()) {
    for (const auto& [name, shape] : weights) {
      if (!seen.count(name)) {
        return InvalidArgument("training state: weight \"" + name + "\" is missing");
      }
    }
  }
  std::set<std::string> slot_names;
  if (cm.optimizer) {
    for (const std::string& s : cm.optimizer->SlotNames()) slot_names.insert(s);
  }
  for (const NamedTensor& t : c.optimizer) {
    const size_t slash = t.name.rfind('/');
    auto it = slash == std::string::npos ? weights.end() : weights.find(t.name.substr(0, slash));
    if (it == weights.end() || !slot_names.count(t.name.substr(slash + 1))) {
      return InvalidArgument("training state: optimizer slot \"" + t.name +
                             "\" belongs to no weight of this model and optimizer");
    }
    if (*it->second != t.value.shape()) {
      return InvalidArgument("training state: optimizer slot \"" + t.name +
                             "\" is not shaped like its weight");
    }
  }
  return Status::Ok();
}

}  // namespace

std::string EncodeTrainingState(const CompiledModel& cm) {
  const Checkpoint c = cm.MakeCheckpoint();
  std::string out(kMagic, sizeof kMagic);
  Put(&out, kFormat);
  Put(&out, c.version);
  Put(&out, c.epoch);
  Put(&out, static_cast<uint32_t>(c.model.size() + c.optimizer.size()));
  for (const NamedTensor& t : c.model) PutTensor(&out, 0, t);
  for (const NamedTensor& t : c.optimizer) PutTensor(&out, 1, t);
  return out;
}

Status DecodeTrainingState(std::string_view bytes, CompiledModel& cm) {
  Reader r(bytes);
  std::string_view magic;
  uint32_t format = 0, count = 0;
  Checkpoint c;
  if (!r.Take(sizeof kMagic, &magic)) return Truncated(r);
  if (magic != std::string_view(kMagic, sizeof kMagic)) {
    return InvalidArgument("training state: bad magic (not an edl training state)");
  }
  if (!r.Get(&format) || !r.Get(&c.version) || !r.Get(&c.epoch) || !r.Get(&count)) {
    return Truncated(r);
  }
  if (format != kFormat) {
    return InvalidArgument("training state: format " + std::to_string(format) +
                           ", this edl reads " + std::to_string(kFormat));
  }
  if (c.version < 0 || c.epoch < 0) {
    return InvalidArgument("training state: negative step or epoch");
  }
  for (uint32_t i = 0; i < count; ++i) {
    uint8_t group = 0;
    uint32_t name_len = 0, rank = 0;
    std::string_view name;
    if (!r.Get(&group) || !r.Get(&name_len) || !r.Take(name_len, &name) || !r.Get(&rank)) {
      return Truncated(r);
    }
    if (group > 1) {
      return InvalidArgument("training state: tensor \"" + std::string(name) +
                             "\" has unknown group " + std::to_string(group));
    }
    if (rank > kMaxRank) {
      return InvalidArgument("training state: tensor \"" + std::string(name) + "\" has rank " +
                             std::to_string(rank));
    }
    tensor::Shape shape(rank);
    int64_t numel = 1;
    for (uint32_t d = 0; d < rank; ++d) {
      if (!r.Get(&shape[d])) return Truncated(r);
      if (shape[d] < 0 || (shape[d] > 0 && numel > (int64_t{1} << 40) / shape[d])) {
        return InvalidArgument("training state: tensor \"" + std::string(name) +
                               "\" has a bad dimension");
      }
      numel *= shape[d];
    }
    std::string_view data;
    if (!r.Take(static_cast<size_t>(numel) * sizeof(float), &data)) return Truncated(r);
    tensor::Tensor t = tensor::Tensor::Empty(shape);
    std::memcpy(t.f32(), data.data(), data.size());
    (group == 0 ? c.model : c.optimizer).push_back({std::string(name), std::move(t)});
  }
  if (!r.done()) return InvalidArgument("training state: trailing bytes");
  EDL_RETURN_IF_ERROR(CheckFits(c, cm));
  return RestoreCheckpoint(c, cm, /*with_optimizer_state=*/true).WithPrefix("training state");
  return Status::Ok();
}

}  // namespace edl::roles::worker
