#include "roles/ps/merged_checkpoint.h"

#include <cstring>
#include <map>

#include "roles/ps/embedding_spec.h"
#include "roles/ps/ps_checkpoint.h"

namespace edl::roles::ps {

using tensor::DType;
using tensor::Tensor;

Result<Checkpoint> MergePartitions(const std::vector<Checkpoint>& partitions,
                                   const nn::keras::Model& model, uint64_t seed) {
  if (partitions.empty()) return InvalidArgument("no checkpoint partitions");
  EDL_ASSIGN_OR_RETURN(std::vector<EmbeddingSpec> specs, FindEmbeddingTables(model));
  std::map<std::string, const EmbeddingSpec*> table_of;
  for (const EmbeddingSpec& s : specs) table_of[s.name] = &s;
  std::map<std::string, const Tensor*> by_name;
  for (const Checkpoint& c : partitions) {
    for (const NamedTensor& t : c.model) by_name[t.name] = &t.value;
  }
  Checkpoint out;
  out.version = partitions[0].version;
  out.epoch = partitions[0].epoch;
  out.model_spec_json = partitions[0].model_spec_json;
  out.optimizer_json = partitions[0].optimizer_json;
  for (const nn::Parameter* p : model.parameters()) {
    auto table = table_of.find(p->name);
    if (table == table_of.end()) {
      auto it = by_name.find(p->name);
      if (it == by_name.end()) {
        return InvalidArgument("parameter-server checkpoint has no weight \"" + p->name + "\"");
      }
      if (it->second->shape() != p->value.shape()) {
        return InvalidArgument("parameter-server checkpoint weight \"" + p->name + "\" has shape " +
                               tensor::ShapeString(it->second->shape()) + ", the model needs " +
                               tensor::ShapeString(p->value.shape()));
      }
      out.model.push_back({p->name, *it->second});
      continue;
    }
    const EmbeddingSpec& spec = *table->second;
    const int64_t dim = spec.dim;
    Tensor full = Tensor::Empty({spec.input_dim, dim});
    std::vector<bool> stored(static_cast<size_t>(spec.input_dim), false);
    for (const Checkpoint& c : partitions) {
      const Tensor* ids = nullptr;
      const Tensor* values = nullptr;
      for (const NamedTensor& t : c.model) {
        if (t.name == spec.name + "#ids") ids = &t.value;
        if (t.name == spec.name + "#values") values = &t.value;
      }
      if (ids == nullptr && values == nullptr) continue;
      if (ids == nullptr || values == nullptr || ids->dtype() != DType::kInt64 ||
          values->numel() != ids->numel() * dim) {
        return InvalidArgument("parameter-server checkpoint table \"" + spec.name +
                               "\": needs int64 \"#ids\" [n] and \"#values\" [n, " +
                               std::to_string(dim) + "]");
      }
      for (int64_t i = 0; i < ids->numel(); ++i) {
        const int64_t id = ids->i64()[i];
        if (id < 0 || id >= spec.input_dim) {
          return InvalidArgument("parameter-server checkpoint table \"" + spec.name + "\": row " +
                                 std::to_string(id) + " outside [0, " +
                                 std::to_string(spec.input_dim) + ")");
        }
        std::memcpy(full.f32() + id * dim, values->f32() + i * dim, dim * sizeof(float));
        stored[id] = true;
      }
    }
    const RowInitializer initial_row(spec, seed);
    for (int64_t id = 0; id < spec.input_dim; ++id) {
      if (!stored[id]) initial_row(id, full.f32() + id * dim);
    }
    out.model.push_back({p->name, full});
  }
  for (const Checkpoint& c : partitions) {
    for (const NamedTensor& t : c.optimizer) {
      if (t.name.find('#') == std::string::npos) out.optimizer.push_back(t);
    }
  }
  return out;
}

Result<Checkpoint> ReadMergedCheckpoint(const std::string& root, const nn::keras::Model& model,
                                        uint64_t seed) {
  const std::vector<int64_t> versions = ListCompleteVersions(root);
  if (versions.empty()) {
    return NotFound(root + ": no complete parameter-server checkpoint");
  }
  EDL_ASSIGN_OR_RETURN(std::vector<Checkpoint> parts, ReadPartitions(root, versions.back()));
  return MergePartitions(parts, model, seed);
}

}  // namespace edl::roles::ps
