#include "sqlflow/feature_spec.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>

namespace edl::sqlflow {
namespace {

using data::SqlColumn;
using data::SqlConnection;
using data::SqlType;
using json = nlohmann::json;

// Distinct values a vocabulary may take from the data.
constexpr int64_t kMaxVocabulary = 10000;

Result<std::vector<std::string>> Column(SqlConnection& db, const std::string& sql) {
  EDL_ASSIGN_OR_RETURN(auto rows, db.Query(sql));
  std::vector<std::string> out;
  for (;;) {
    EDL_ASSIGN_OR_RETURN(bool more, rows->Next());
    if (!more) break;
    out.emplace_back(rows->fields()[0]);
  }
  return out;
}

bool IsNumber(SqlType t) {
  return t == SqlType::kInteger || t == SqlType::kReal || t == SqlType::kBool ||
         t == SqlType::kOther;
}

class Builder {
 public:
  Builder(const Statement& s, const SelectPlan& plan, SqlConnection& db)
      : s_(s), plan_(plan), db_(db) {}

  Result<FeatureSpec> Build() {
    if (s_.label.empty()) {
      return InvalidArgument(s_.where_at + ": training needs LABEL column (the value to learn)");
    }
    EDL_ASSIGN_OR_RETURN(const SqlColumn* label, Find(s_.label, "LABEL", s_.where_at));
    input_["format"] = "csv";
    input_["label"] = label->name;
    EDL_RETURN_IF_ERROR(Label(*label));
    if (s_.columns.empty()) {
      for (const SqlColumn& c : plan_.columns) {
        if (c.name == plan_.key || c.name == s_.label) continue;
        FeatureColumn f;
        f.column = c.name;
        f.where = s_.where_at;
        EDL_RETURN_IF_ERROR(Feature(f));
      }
    } else {
      for (const FeatureColumn& f : s_.columns) EDL_RETURN_IF_ERROR(Feature(f));
    }
    if (numeric_.empty() && categorical_.empty()) {
      return InvalidArgument(s_.where_at + ": no feature columns besides the label and key '" +
                             plan_.key + "'");
    }
    input_["numeric"] = numeric_;
    if (!normalize_.empty()) input_["normalize"] = normalize_;
    if (!categorical_.empty()) {
      input_["categorical"] = categorical_;
      input_["categorical_layout"] = "concat_with_offsets";
    }
    spec_.num_numeric = static_cast<int64_t>(numeric_.size());
    spec_.num_categorical = static_cast<int64_t>(categorical_.size());
    spec_.input_json = input_.dump();
    return spec_;
  }

 private:
  Result<const SqlColumn*> Find(const std::string& name, const std::string& role,
                                const std::string& where) const {
    for (const SqlColumn& c : plan_.columns) {
      if (c.name == name) return &c;
    }
    std::string have;
    for (const SqlColumn& c : plan_.columns) have += (have.empty() ? "" : ", ") + c.name;
    return InvalidArgument(where + ": " + role + " column '" + name +
                           "' is not selected from table \"" + s_.table + "\" (it gives " + have +
                           ")");
  }

  std::string Q(const std::string& name) const { return SqlConnection::QuoteIdentifier(name); }
  std::string AsNumber(const std::string& name) const {
    return "CAST(" + Q(name) + " AS double precision)";
  }

  Status Label(const SqlColumn& label) {
    const std::string l = Q(label.name);
    if (label.type == SqlType::kText) {
      EDL_ASSIGN_OR_RETURN(
          std::vector<std::string> values,
          Column(db_, "SELECT DISTINCT " + l + " FROM " + plan_.relation + " WHERE " + l +
                          " IS NOT NULL ORDER BY 1 LIMIT " + std::to_string(kMaxVocabulary + 1)));
      if (static_cast<int64_t>(values.size()) > kMaxVocabulary) {
        return InvalidArgument("LABEL '" + label.name + "' has more than " +
                               std::to_string(kMaxVocabulary) + " distinct values");
      }
      spec_.label_vocabulary = values;
      spec_.num_classes = static_cast<int64_t>(values.size());
      input_["label_vocabulary"] = values;
      return Status::Ok();
    }
    if (!IsNumber(label.type)) {
      return InvalidArgument("LABEL '" + label.name + "' is " + label.type_name +
                             "; a label is a number or text");
    }
    // The label's range and how many of its values are not integers, in
    // one pass.
    EDL_ASSIGN_OR_RETURN(
        auto stats, db_.QueryRow("SELECT min(" + AsNumber(label.name) + "), max(" +
                                 AsNumber(label.name) + "), sum(CASE WHEN " + l + " <> CAST(" + l +
                                 " AS integer) THEN 1 ELSE 0 END) FROM " + plan_.relation));
    if (stats.size() < 3 || !stats[0]) {
      return FailedPrecondition("table \"" + s_.table +
                                "\": the SELECT returns no rows to train on");
    }
    const double lo = std::stod(*stats[0]), hi = std::stod(*stats[1]);
    const bool integral = stats[2] && std::stoll(*stats[2]) == 0;
    spec_.regression = !(integral && lo >= 0 && hi < 1e6);
    if (label.type == SqlType::kReal && !integral) spec_.regression = true;
    spec_.num_classes = spec_.regression ? 0 : static_cast<int64_t>(hi) + 1;
    input_["label_type"] = spec_.regression ? "float" : "int";
    return Status::Ok();
  }

  Status Feature(const FeatureColumn& f) {
    EDL_ASSIGN_OR_RETURN(const SqlColumn* c, Find(f.column, "COLUMN", f.where));
    if (c->name == s_.label) {
      return InvalidArgument(f.where + ": '" + c->name + "' is the LABEL; it cannot be a feature");
    }
    if (!seen_.insert({c->name, 0}).second) {
      return InvalidArgument(f.where + ": column '" + c->name + "' is used twice");
    }
    using Kind = FeatureColumn::Kind;
    Kind kind = f.kind;
    if (kind == Kind::kPlain) kind = c->type == SqlType::kText ? Kind::kPlain : Kind::kNumeric;
    if ((kind == Kind::kNumeric || kind == Kind::kBucket) && !IsNumber(c->type)) {
      return InvalidArgument(f.where + ": column '" + c->name + "' is " + c->type_name +
                             ", not a number (use CATEGORY_HASH(" + c->name + ", n) for text)");
    }
    spec_.embedding_dim = std::max(spec_.embedding_dim, f.embedding_dim);
    json cat = {{"column", c->name}};
    switch (kind) {
      case Kind::kNumeric: {
        EDL_ASSIGN_OR_RETURN(auto mean, db_.QueryRow("SELECT avg(" + AsNumber(c->name) + ") FROM " +
                                                     plan_.relation));
        if (mean.empty() || !mean[0]) {
          return FailedPrecondition(f.where + ": column '" + c->name +
                                    "' has no values to normalize by");
        }
        const std::string m = *mean[0];
        EDL_ASSIGN_OR_RETURN(
            auto var, db_.QueryRow("SELECT avg((" + AsNumber(c->name) + " - (" + m + ")) * (" +
                                   AsNumber(c->name) + " - (" + m + "))) FROM " + plan_.relation));
        double sd = var.empty() || !var[0] ? 0 : std::sqrt(std::max(0.0, std::stod(*var[0])));
        if (!(sd > 1e-12)) sd = 1;  // a constant column: centred only
        numeric_.push_back(c->name);
        normalize_[c->name] = {{"mean", std::stod(m)}, {"std", sd}};
        return Status::Ok();
      }
      case Kind::kPlain: {
        EDL_ASSIGN_OR_RETURN(
            std::vector<std::string> values,
            Column(db_, "SELECT DISTINCT CAST(" + Q(c->name) + " AS text) FROM " + plan_.relation +
                            " WHERE " + Q(c->name) + " IS NOT NULL ORDER BY 1 LIMIT " +
                            std::to_string(kMaxVocabulary + 1)));
        if (static_cast<int64_t>(values.size()) > kMaxVocabulary) {
          return InvalidArgument(f.where + ": column '" + c->name + "' has more than " +
                                 std::to_string(kMaxVocabulary) +
                                 " distinct values; use CATEGORY_HASH(" + c->name + ", n)");
        }
        if (values.empty()) values.push_back("");
        cat["vocabulary"] = values;
        spec_.num_ids += static_cast<int64_t>(values.size()) + 1;
        break;
      }
      case Kind::kCategoryId:
        cat["num_buckets"] = f.buckets;
        spec_.num_ids += f.buckets;
        break;
      case Kind::kCategoryHash:
        cat["hash_buckets"] = f.buckets;
        spec_.num_ids += f.buckets;
        break;
      case Kind::kBucket: {
        EDL_ASSIGN_OR_RETURN(
            auto count, db_.QueryRow("SELECT count(" + Q(c->name) + ") FROM " + plan_.relation));
        const int64_t n = count.empty() || !count[0] ? 0 : std::stoll(*count[0]);
        if (n == 0) {
          return FailedPrecondition(f.where + ": column '" + c->name + "' has no values to bucket");
        }
        std::vector<double> bounds;
        for (int64_t k = 1; k < f.buckets; ++k) {
          EDL_ASSIGN_OR_RETURN(auto q, db_.QueryRow("SELECT " + AsNumber(c->name) + " FROM " +
                                                    plan_.relation + " WHERE " + Q(c->name) +
                                                    " IS NOT NULL ORDER BY 1 LIMIT 1 OFFSET " +
                                                    std::to_string(k * n / f.buckets)));
          if (q.empty() || !q[0]) continue;
          const double b = std::stod(*q[0]);
          if (bounds.empty() || b > bounds.back()) bounds.push_back(b);
        }
        cat["boundaries"] = bounds;
        spec_.num_ids += static_cast<int64_t>(bounds.size()) + 1;
        break;
      }
    }
    categorical_.push_back(cat);
    return Status::Ok();
  }

  const Statement& s_;
  const SelectPlan& plan_;
  SqlConnection& db_;
  FeatureSpec spec_;
  json input_ = json::object();
  json numeric_ = json::array();
  json normalize_ = json::object();
  json categorical_ = json::array();
  std::map<std::string, int> seen_;
};

}  // namespace

Result<FeatureSpec> BuildFeatureSpec(const Statement& s, const SelectPlan& plan,
                                     data::SqlConnection& db) {
  return Builder(s, plan, db).Build();
}

}  // namespace edl::sqlflow
