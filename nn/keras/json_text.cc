#include "nn/keras/json_text.h"

namespace edl::nn::keras {

Result<nlohmann::json> ParseJsonText(const std::string& text, const std::string& origin) {
  try {
    return nlohmann::json::parse(text);
  } catch (const nlohmann::json::parse_error& e) {
    size_t line = 1, column = 1;
    size_t end = std::min<size_t>(e.byte == 0 ? 0 : e.byte - 1, text.size());
    for (size_t i = 0; i < end; ++i) {
      if (text[i] == '\n') {
        ++line;
        column = 1;
      } else {
        ++column;
      }
    }
    std::string reason = e.what();
    // "[json.exception.parse_error.101] parse error at line 1, column 2:
    // syntax error while parsing value - ..." -> the part after the colon.
    size_t at = reason.find("column");
    if (at != std::string::npos) {
      size_t colon = reason.find(": ", at);
      if (colon != std::string::npos) reason = reason.substr(colon + 2);
    }
    return InvalidArgument(origin + ": invalid JSON at line " + std::to_string(line) + ", column " +
                           std::to_string(column) + ": " + reason);
  } catch (const nlohmann::json::exception& e) {
    return InvalidArgument(origin + ": invalid JSON: " + e.what());
  }
}

std::string JoinPath(const std::string& prefix, const std::string& key) {
  return prefix.empty() ? key : prefix + "." + key;
}

std::string IndexPath(const std::string& prefix, size_t index) {
  return prefix + "[" + std::to_string(index) + "]";
}

}  // namespace edl::nn::keras
