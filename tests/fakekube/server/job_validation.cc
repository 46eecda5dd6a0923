// Job validation (see job_validation.h), after
// pkg/apis/batch/validation/validation.go.
#include "tests/fakekube/server/job_validation.h"

#include <algorithm>
#include <set>

#include "tests/fakekube/server/json_fields.h"
#include "tests/fakekube/server/name_formats.h"
#include "tests/fakekube/server/pod_spec_validation.h"

namespace edl::fakekube {
namespace {

std::string Index(const std::string& path, size_t i) {
  return path + "[" + std::to_string(i) + "]";
}

FieldError NotSupported(const std::string& field, const std::string& value,
                        const std::string& supported) {
  return FieldError{"FieldValueNotSupported", field, "supported values: " + supported,
                    Json(value).dump()};
}

// Go's %#v of an []int32, as field.Invalid prints the values of a rule.
std::string Int32Slice(const Json& values) {
  std::string out = "[]int32{";
  for (size_t i = 0; i < values.size(); ++i) out += (i ? ", " : "") + values[i].dump();
  return out + "}";
}

void ValidateOnExitCodes(const Json& on_exit_codes, const std::string& path,
                         const std::set<std::string>& containers, std::vector<FieldError>& errors) {
  const std::string op = StringAt(on_exit_codes, "operator");
  if (op.empty()) {
    errors.push_back(RequiredField(path + ".operator", "valid values: [\"In\" \"NotIn\"]"));
  } else if (op != "In" && op != "NotIn") {
    errors.push_back(NotSupported(path + ".operator", op, "\"In\", \"NotIn\""));
  }
  if (on_exit_codes.contains("containerName")) {
    const std::string name = StringAt(on_exit_codes, "containerName");
    if (!containers.count(name)) {
      errors.push_back(InvalidField(path + ".containerName", Json(name).dump(),
                                    "must be one of the container or initContainer names in the "
                                    "pod template"));
    }
  }
  const Json values = ArrayAt(on_exit_codes, "values");
  if (values.empty()) {
    errors.push_back(
        InvalidField(path + ".values", Int32Slice(values), "at least one value is required"));
  }
  std::set<int64_t> seen;
  bool ordered = true;
  for (size_t i = 0; i < values.size(); ++i) {
    const std::string at = Index(path + ".values", i);
    if (!values[i].is_number_integer()) {
      errors.push_back(InvalidField(at, values[i].dump(), "must be an integer"));
      continue;
    }
    const int64_t v = values[i].get<int64_t>();
    if (op == "In" && v == 0) {
      errors.push_back(InvalidField(at, "0", "must not be 0 for the In operator"));
    }
    if (!seen.insert(v).second) {
      errors.push_back(FieldError{"FieldValueDuplicate", at, "", std::to_string(v)});
    }
    if (i > 0 && values[i - 1].is_number_integer() && values[i - 1].get<int64_t>() > v) {
      ordered = false;
    }
  }
  if (!ordered)
    errors.push_back(InvalidField(path + ".values", Int32Slice(values), "must be ordered"));
}

void ValidateOnPodConditions(const Json& patterns, const std::string& path,
                             std::vector<FieldError>& errors) {
  for (size_t i = 0; i < patterns.size(); ++i) {
    const std::string at = Index(path, i);
    const std::string type = StringAt(patterns[i], "type");
    for (const std::string& e : QualifiedNameErrors(type)) {
      errors.push_back(InvalidField(at + ".type", Json(type).dump(), e));
    }
    const std::string status = StringAt(patterns[i], "status");
    if (status.empty()) {
      errors.push_back(
          RequiredField(at + ".status", "valid values: [\"False\" \"True\" \"Unknown\"]"));
    } else if (status != "True" && status != "False" && status != "Unknown") {
      errors.push_back(NotSupported(at + ".status", status, "\"False\", \"True\", \"Unknown\""));
    }
  }
}

void ValidatePodFailurePolicy(const Json& spec, const std::set<std::string>& containers,
                              std::vector<FieldError>& errors) {
  const std::string path = "spec.podFailurePolicy";
  const Json policy = ObjectAt(spec, "podFailurePolicy");
  if (!policy.contains("rules") || !policy["rules"].is_array()) {
    errors.push_back(RequiredField(path + ".rules"));
    return;
  }
  const Json& rules = policy["rules"];
  for (size_t i = 0; i < rules.size(); ++i) {
    const std::string at = Index(path + ".rules", i);
    const Json& rule = rules[i];
    const std::string action = StringAt(rule, "action");
    if (action.empty()) {
      errors.push_back(RequiredField(
          at + ".action", "valid values: [\"Count\" \"FailIndex\" \"FailJob\" \"Ignore\"]"));
    } else if (action == "FailIndex") {
      if (!spec.contains("backoffLimitPerIndex")) {
        errors.push_back(InvalidField(at + ".action", Json(action).dump(),
                                      "requires the backoffLimitPerIndex to be set"));
      }
    } else if (action != "Count" && action != "FailJob" && action != "Ignore") {
      errors.push_back(NotSupported(at + ".action", action,
                                    "\"Count\", \"FailIndex\", \"FailJob\", \"Ignore\""));
    }
    const bool exit_codes =
        rule.is_object() && rule.contains("onExitCodes") && !rule["onExitCodes"].is_null();
    const Json conditions = ArrayAt(rule, "onPodConditions");
    if (exit_codes) {
      ValidateOnExitCodes(ObjectAt(rule, "onExitCodes"), at + ".onExitCodes", containers, errors);
    }
    ValidateOnPodConditions(conditions, at + ".onPodConditions", errors);
    if (exit_codes && !conditions.empty()) {
      errors.push_back(
          InvalidField(at, "", "specifying both OnExitCodes and OnPodConditions is not supported"));
    }
    if (!exit_codes && conditions.empty()) {
      errors.push_back(
          InvalidField(at, "", "specifying one of OnExitCodes and OnPodConditions is required"));
    }
  }
}

}  // namespace

void ValidateJob(const Json& job, std::vector<FieldError>& errors) {
  const Json spec = ObjectAt(job, "spec");
  const Json pod_spec = ObjectAt(ObjectAt(spec, "template"), "spec");
  for (const char* field : {"parallelism", "completions", "activeDeadlineSeconds", "backoffLimit",
                            "ttlSecondsAfterFinished"}) {
    if (spec.contains(field) && spec[field].is_number_integer() && spec[field].get<int64_t>() < 0) {
      errors.push_back(InvalidField(std::string("spec.") + field, spec[field].dump(),
                                    "must be greater than or equal to 0"));
    }
  }
  for (const char* field : {"parallelism", "completions"}) {
    if (spec.contains(field) && spec[field] != 1) {
      errors.push_back(FieldError{"FieldValueNotSupported", std::string("spec.") + field,
                                  "this fake cluster runs Jobs of one pod", spec[field].dump()});
    }
  }
  const bool has_policy = spec.contains("podFailurePolicy") && !spec["podFailurePolicy"].is_null();
  if (has_policy) {
    std::set<std::string> containers;
    for (const char* list : {"containers", "initContainers"}) {
      for (const Json& c : ArrayAt(pod_spec, list)) containers.insert(StringAt(c, "name"));
    }
    ValidatePodFailurePolicy(spec, containers, errors);
  }
  if (spec.contains("podReplacementPolicy")) {
    const std::string replacement = StringAt(spec, "podReplacementPolicy");
    if (has_policy && replacement != "Failed") {
      errors.push_back(NotSupported("spec.podReplacementPolicy", replacement, "\"Failed\""));
    } else if (!has_policy && replacement != "Failed" && replacement != "TerminatingOrFailed") {
      errors.push_back(NotSupported("spec.podReplacementPolicy", replacement,
                                    "\"Failed\", \"TerminatingOrFailed\""));
    }
  }
  ValidatePodSpec(pod_spec, "spec.template.spec", errors);
  // The registry defaults an absent restartPolicy to Always, which a Job
  // may not use.
  const std::string restart = StringAt(pod_spec, "restartPolicy");
  const std::string restart_path = "spec.template.spec.restartPolicy";
  if (restart.empty() || restart == "Always") {
    errors.push_back(RequiredField(restart_path, "valid values: \"OnFailure\", \"Never\""));
  } else if (restart != "OnFailure" && restart != "Never") {
    errors.push_back(NotSupported(restart_path, restart, "\"OnFailure\", \"Never\""));
  } else if (has_policy && restart != "Never") {
    errors.push_back(
        InvalidField(restart_path, Json(restart).dump(),
                     "only \"Never\" is supported when podFailurePolicy is specified"));
  }
}

}  // namespace edl::fakekube
