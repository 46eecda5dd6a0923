#include "roles/cluster/kube_resources.h"

#include <cctype>
#include <cmath>
#include <cstdlib>
#include <sstream>

namespace edl::roles::cluster {
namespace {

std::vector<std::string> Split(const std::string& text, char sep) {
  std::vector<std::string> out;
  std::string item;
  std::stringstream in(text);
  while (std::getline(in, item, sep)) out.push_back(item);
  return out;
}

std::string Trim(const std::string& s) {
  size_t b = 0, e = s.size();
  while (b < e && std::isspace(static_cast<unsigned char>(s[b]))) ++b;
  while (e > b && std::isspace(static_cast<unsigned char>(s[e - 1]))) --e;
  return s.substr(b, e - b);
}

bool IsDigits(const std::string& s) {
  if (s.empty()) return false;
  for (char c : s) {
    if (!std::isdigit(static_cast<unsigned char>(c))) return false;
  }
  return true;
}

// A non-negative decimal number: "1", "0.5", "2.".
bool IsDecimal(const std::string& s) {
  if (s.empty()) return false;
  int dots = 0, digits = 0;
  for (char c : s) {
    if (c == '.')
      ++dots;
    else if (std::isdigit(static_cast<unsigned char>(c)))
      ++digits;
    else
      return false;
  }
  return dots <= 1 && digits > 0;
}

bool IsCpu(const std::string& v) {
  if (v.size() > 1 && v.back() == 'm') return IsDigits(v.substr(0, v.size() - 1));
  return IsDecimal(v);
}

}  // namespace

double CpuCores(const std::string& v) {
  if (v.size() > 1 && v.back() == 'm') return std::stod(v.substr(0, v.size() - 1)) / 1000.0;
  return std::stod(v);
}

namespace {

bool IsMemory(const std::string& v) {
  static const char* kSuffixes[] = {"Ei", "Pi", "Ti", "Gi", "Mi", "Ki", "E",
                                    "P",  "T",  "G",  "M",  "K",  "k"};
  for (const char* suffix : kSuffixes) {
    const std::string s(suffix);
    if (v.size() > s.size() && v.compare(v.size() - s.size(), s.size(), s) == 0) {
      return IsDigits(v.substr(0, v.size() - s.size()));
    }
  }
  return IsDigits(v);
}

}  // namespace

Result<ResourceList> ParseResources(const std::string& flag, const std::string& text) {
  ResourceList out;
  for (const std::string& raw : Split(text, ',')) {
    const std::string part = Trim(raw);
    if (part.empty()) continue;
    const size_t eq = part.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == part.size()) {
      return InvalidArgument(flag + ": \"" + part +
                             "\" is not name=quantity (e.g. cpu=1,memory=4096Mi,gpu=1)");
    }
    std::string name = Trim(part.substr(0, eq));
    const std::string value = Trim(part.substr(eq + 1));
    if (name == "cpu") {
      if (!IsCpu(value)) {
        return InvalidArgument(flag + ": cpu=" + value +
                               " is not a number of cores or millicores (1, 0.5, 500m)");
      }
    } else if (name == "memory" || name == "disk" || name == "ephemeral-storage") {
      if (!IsMemory(value)) {
        return InvalidArgument(
            flag + ": " + name + "=" + value +
            " is not an integer with an optional E/P/T/G/M/K[i] suffix (4096Mi, 2Gi)");
      }
      if (name == "disk") name = "ephemeral-storage";
    } else if (name == "gpu" || name.find('/') != std::string::npos) {
      if (!IsDigits(value)) {
        return InvalidArgument(flag + ": " + name + "=" + value +
                               " is not a whole number of devices");
      }
      if (name == "gpu") name = "nvidia.com/gpu";
    } else {
      return InvalidArgument(flag + ": unknown resource \"" + name +
                             "\" (cpu, memory, disk, ephemeral-storage, gpu, or <vendor>/<name>)");
    }
    if (out.count(name)) return InvalidArgument(flag + ": " + name + " given twice");
    out[name] = value;
  }
  return out;
}

bool OnVolume(const std::string& path, const std::vector<VolumeSpec>& volumes) {
  for (const auto& v : volumes) {
    const std::string& m = v.mount_path;
    if (path == m || (path.size() > m.size() && path.compare(0, m.size(), m) == 0 &&
                      (m.back() == '/' || path[m.size()] == '/'))) {
      return true;
    }
  }
  return false;
}

Result<std::vector<VolumeSpec>> ParseVolumes(const std::string& flag, const std::string& text) {
  std::vector<VolumeSpec> out;
  for (const std::string& raw : Split(text, ';')) {
    const std::string volume = Trim(raw);
    if (volume.empty()) continue;
    VolumeSpec v;
    v.name = "volume-" + std::to_string(out.size());
    for (const std::string& kv_raw : Split(volume, ',')) {
      const std::string kv = Trim(kv_raw);
      if (kv.empty()) continue;
      const size_t eq = kv.find('=');
      if (eq == std::string::npos) {
        return InvalidArgument(flag + ": \"" + kv + "\" in \"" + volume + "\" is not key=value");
      }
      const std::string key = Trim(kv.substr(0, eq)), value = Trim(kv.substr(eq + 1));
      if (key == "claim_name")
        v.claim_name = value;
      else if (key == "host_path")
        v.host_path = value;
      else if (key == "mount_path")
        v.mount_path = value;
      else if (key == "sub_path")
        v.sub_path = value;
      else if (key == "type")
        v.host_path_type = value;
      else {
        return InvalidArgument(flag + ": unknown key \"" + key + "\" in \"" + volume +
                               "\" (claim_name, host_path, mount_path, sub_path, type)");
      }
    }
    if (v.claim_name.empty() == v.host_path.empty()) {
      return InvalidArgument(
          flag + ": \"" + volume +
          "\" needs exactly one of claim_name= (a PersistentVolumeClaim) or host_path=");
    }
    if (v.mount_path.empty() || v.mount_path[0] != '/') {
      return InvalidArgument(flag + ": \"" + volume + "\" needs an absolute mount_path=");
    }
    if (!v.host_path.empty() && v.host_path[0] != '/') {
      return InvalidArgument(flag + ": host_path=" + v.host_path + " is not absolute");
    }
    if (!v.claim_name.empty()) {
      EDL_RETURN_IF_ERROR(CheckDnsLabel(flag + " claim_name", v.claim_name, 253));
    }
    for (const VolumeSpec& other : out) {
      if (other.mount_path == v.mount_path) {
        return InvalidArgument(flag + ": two volumes mounted at " + v.mount_path);
      }
    }
    out.push_back(v);
  }
  return out;
}

Result<std::vector<std::string>> WorkerPriorities(const std::string& flag, const std::string& text,
                                                  int num_workers) {
  const std::string t = Trim(text);
  std::vector<std::string> out(static_cast<size_t>(std::max(num_workers, 0)), t);
  if (t.empty() || !(std::isdigit(static_cast<unsigned char>(t[0])) || t[0] == '.')) {
    if (!t.empty()) EDL_RETURN_IF_ERROR(CheckDnsLabel(flag, t, 253));
    return out;
  }
  char* end = nullptr;
  const double f = std::strtod(t.c_str(), &end);
  if (end == t.c_str() || *end != '\0' || !(f >= 0 && f <= 1)) {
    return InvalidArgument(flag + ": \"" + t +
                           "\" is neither a PriorityClass name nor a fraction in [0, 1]");
  }
  const int n = num_workers;
  const int high = static_cast<int>(std::ceil(n * f - 1e-9));
  for (auto& p : out) p = "low";
  // 0, n-1, 1, n-2, ...
  int lo = 0, hi = n - 1;
  for (int k = 0; k < high; ++k) {
    const int index = (k % 2 == 0) ? lo++ : hi--;
    out[static_cast<size_t>(index)] = "high";
  }
  return out;
}

Result<std::vector<std::pair<std::string, std::string>>> ParseEnvs(const std::string& flag,
                                                                   const std::string& text) {
  std::vector<std::pair<std::string, std::string>> out;
  for (const std::string& piece : Split(text, ',')) {
    const size_t eq = piece.find('=');
    if (eq == std::string::npos || eq == 0) {
      if (out.empty()) {
        if (Trim(piece).empty()) continue;
        return InvalidArgument(flag + ": \"" + piece + "\" is not NAME=VALUE");
      }
      out.back().second += "," + piece;
      continue;
    }
    const std::string name = Trim(piece.substr(0, eq));
    for (char c : name) {
      if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.' || c == '-')) {
        return InvalidArgument(flag + ": \"" + name +
                               "\" is not a valid environment variable name");
      }
    }
    out.emplace_back(name, piece.substr(eq + 1));
  }
  return out;
}

Status CheckDnsLabel(const std::string& what, const std::string& name, size_t max_length) {
  auto bad = [&](const std::string& why) {
    return InvalidArgument(what + ": \"" + name + "\" " + why +
                           " (Kubernetes names are lower-case letters, digits and '-', "
                           "starting and ending with a letter or digit)");
  };
  if (name.empty()) return bad("is empty");
  if (name.size() > max_length)
    return bad("is longer than " + std::to_string(max_length) + " characters");
  for (char c : name) {
    if (!(std::islower(static_cast<unsigned char>(c)) ||
          std::isdigit(static_cast<unsigned char>(c)) || c == '-' ||
          (max_length > 63 && c == '.'))) {
      return bad("holds '" + std::string(1, c) + "'");
    }
  }
  if (!std::isalnum(static_cast<unsigned char>(name.front())) ||
      !std::isalnum(static_cast<unsigned char>(name.back()))) {
    return bad("must start and end with a letter or digit");
  }
  return Status::Ok();
}

}  // namespace edl::roles::cluster
