#include "agent/schema.h"

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "re2/re2.h"

namespace agent {
namespace {

using nlohmann::json;

constexpr const char* kTypeNames[] = {"null", "boolean", "object", "array",
                                      "number", "string", "integer"};

// Keywords that carry meaning only for documentation; draft 7 says validators ignore them.
constexpr const char* kAnnotations[] = {"$schema", "$comment", "title", "description", "default",
                                        "examples"};

constexpr const char* kKeywords[] = {
    "type",    "properties", "required", "additionalProperties", "enum",    "const",
    "minLength", "maxLength", "pattern", "minimum",              "maximum", "exclusiveMinimum",
    "exclusiveMaximum", "items", "minItems", "maxItems"};

bool IsIntegerValued(const json& v) {
  if (v.is_number_integer()) return true;  // Also covers unsigned.
  if (!v.is_number_float()) return false;
  double d = v.get<double>();
  return std::isfinite(d) && std::floor(d) == d;
}

// The JSON type name of `v` as a schema's `type` keyword names it ("integer" for 1 and 1.0).
std::string TypeName(const json& v) {
  switch (v.type()) {
    case json::value_t::null: return "null";
    case json::value_t::boolean: return "boolean";
    case json::value_t::object: return "object";
    case json::value_t::array: return "array";
    case json::value_t::string: return "string";
    case json::value_t::number_integer:
    case json::value_t::number_unsigned: return "integer";
    case json::value_t::number_float: return IsIntegerValued(v) ? "integer" : "number";
    default: return "unsupported";
  }
}

bool HasType(const json& v, const std::string& type) {
  if (type == "number") return v.is_number();
  if (type == "integer") return IsIntegerValued(v);
  return TypeName(v) == type;
}

// Three-way comparison of two JSON numbers, exact when both are integers.
int CompareNumbers(const json& a, const json& b) {
  if (a.is_number_integer() && b.is_number_integer()) {
    bool a_neg = !a.is_number_unsigned() && a.get<int64_t>() < 0;
    bool b_neg = !b.is_number_unsigned() && b.get<int64_t>() < 0;
    if (a_neg != b_neg) return a_neg ? -1 : 1;
    if (a_neg) {
      int64_t x = a.get<int64_t>(), y = b.get<int64_t>();
      return x < y ? -1 : (x > y ? 1 : 0);
    }
    uint64_t x = a.get<uint64_t>(), y = b.get<uint64_t>();
    return x < y ? -1 : (x > y ? 1 : 0);
  }
  long double x = a.get<long double>(), y = b.get<long double>();
  return x < y ? -1 : (x > y ? 1 : 0);
}

// Unicode code points in a UTF-8 string: every byte that is not a continuation byte (10xxxxxx).
uint64_t CodePoints(const std::string& s) {
  uint64_t n = 0;
  for (unsigned char c : s) {
    if ((c & 0xC0) != 0x80) ++n;
  }
  return n;
}

bool IsPlainIdentifier(const std::string& key) {
  if (key.empty()) return false;
  for (size_t i = 0; i < key.size(); ++i) {
    char c = key[i];
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' ||
              (i > 0 && c >= '0' && c <= '9');
    if (!ok) return false;
  }
  return true;
}

std::string ChildPath(const std::string& path, const std::string& key) {
  if (IsPlainIdentifier(key)) return absl::StrCat(path, ".", key);
  return absl::StrCat(path, "[", json(key).dump(-1, ' ', false, json::error_handler_t::replace),
                      "]");
}

std::string ChildPath(const std::string& path, size_t index) {
  return absl::StrCat(path, "[", index, "]");
}

std::string Short(const json& v) {
  std::string s = v.dump(-1, ' ', false, json::error_handler_t::replace);
  if (s.size() > 60) s = absl::StrCat(s.substr(0, 57), "...");
  return s;
}

bool IsNonNegativeInteger(const json& v) {
  return IsIntegerValued(v) && v.get<long double>() >= 0;
}

// A length or count limit as an integer, clamped (a conversion out of range would be undefined).
uint64_t AsCount(const json& v) {
  long double d = v.get<long double>();
  if (!(d > 0)) return 0;  // Also NaN.
  return d >= static_cast<long double>(UINT64_MAX) ? UINT64_MAX : static_cast<uint64_t>(d);
}

// ---- CheckSchema ---------------------------------------------------------------------------

absl::Status CheckAt(const json& schema, const std::string& where);

absl::Status Bad(const std::string& where, absl::string_view what) {
  return absl::InvalidArgumentError(absl::StrCat("schema ", where, ": ", what));
}

absl::Status CheckKeyword(const std::string& key, const json& value, const std::string& where) {
  const std::string at = absl::StrCat(where, "/", key);
  if (key == "type") {
    std::vector<json> names = value.is_array() ? value.get<std::vector<json>>()
                                               : std::vector<json>{value};
    for (const json& n : names) {
      bool known = false;
      if (n.is_string()) {
        for (const char* t : kTypeNames) known = known || n.get<std::string>() == t;
      }
      if (!known) return Bad(at, absl::StrCat("unknown type ", Short(n)));
    }
    return absl::OkStatus();
  }
  if (key == "properties") {
    if (!value.is_object()) return Bad(at, "must be an object of schemas");
    for (const auto& [name, sub] : value.items()) {
      if (auto s = CheckAt(sub, absl::StrCat(at, "/", name)); !s.ok()) return s;
    }
    return absl::OkStatus();
  }
  if (key == "additionalProperties") return CheckAt(value, at);
  if (key == "items") {
    if (value.is_array()) {
      for (size_t i = 0; i < value.size(); ++i) {
        if (auto s = CheckAt(value[i], absl::StrCat(at, "/", i)); !s.ok()) return s;
      }
      return absl::OkStatus();
    }
    return CheckAt(value, at);
  }
  if (key == "required") {
    if (!value.is_array()) return Bad(at, "must be an array of strings");
    for (const json& n : value) {
      if (!n.is_string()) return Bad(at, "must be an array of strings");
    }
    return absl::OkStatus();
  }
  if (key == "enum") {
    return value.is_array() ? absl::OkStatus() : Bad(at, "must be an array");
  }
  if (key == "const") return absl::OkStatus();
  if (key == "minLength" || key == "maxLength" || key == "minItems" || key == "maxItems") {
    return IsNonNegativeInteger(value) ? absl::OkStatus() : Bad(at, "must be a non-negative integer");
  }
  if (key == "minimum" || key == "maximum" || key == "exclusiveMinimum" ||
      key == "exclusiveMaximum") {
    return value.is_number() ? absl::OkStatus() : Bad(at, "must be a number");
  }
  if (key == "pattern") {
    if (!value.is_string()) return Bad(at, "must be a string");
    RE2 re(value.get<std::string>(), RE2::Quiet);
    if (!re.ok()) return Bad(at, absl::StrCat("pattern does not compile in RE2: ", re.error()));
    return absl::OkStatus();
  }
  return Bad(at, absl::StrCat("unsupported keyword '", key, "'"));
}

absl::Status CheckAt(const json& schema, const std::string& where) {
  if (schema.is_boolean()) return absl::OkStatus();
  if (!schema.is_object()) return Bad(where, "a schema must be an object or a boolean");
  for (const auto& [key, value] : schema.items()) {
    bool annotation = false;
    for (const char* a : kAnnotations) annotation = annotation || key == a;
    if (annotation) continue;
    if (auto s = CheckKeyword(key, value, where); !s.ok()) return s;
  }
  return absl::OkStatus();
}

// ---- Validate ------------------------------------------------------------------------------

class Validator {
 public:
  explicit Validator(size_t max) : max_(max) {}

  void At(const json& schema, const json& inst, const std::string& path) {
    if (Full()) return;
    if (schema.is_boolean()) {
      if (!schema.get<bool>()) Add(path, "no value is allowed here");
      return;
    }
    if (!schema.is_object()) {
      Add(path, "the schema here is neither an object nor a boolean");
      return;
    }
    for (const auto& [key, value] : schema.items()) {
      if (Full()) return;
      // A schema that skipped CheckSchema may hold a malformed value (a string minLength); report it
      // as a violation instead of letting the json access throw.
      try {
        Keyword(schema, key, value, inst, path);
      } catch (const json::exception& e) {
        Add(path, absl::StrCat("the schema's '", key, "' is malformed: ", e.what()));
      }
    }
  }

  std::vector<SchemaViolation> Take() { return std::move(out_); }

 private:
  bool Full() const { return out_.size() >= max_; }
  void Add(const std::string& path, std::string message) {
    if (!Full()) out_.push_back({path, std::move(message)});
  }

  void Keyword(const json& schema, const std::string& key, const json& value, const json& inst,
               const std::string& path) {
    if (key == "type") {
      std::vector<json> names = value.is_array() ? value.get<std::vector<json>>()
                                                 : std::vector<json>{value};
      for (const json& n : names) {
        if (n.is_string() && HasType(inst, n.get<std::string>())) return;
      }
      Add(path, absl::StrCat("must be of type ", Short(value), " (got ", TypeName(inst), ")"));
    } else if (key == "enum") {
      for (const json& allowed : value) {
        if (allowed == inst) return;
      }
      Add(path, absl::StrCat("must be one of ", Short(value), " (got ", Short(inst), ")"));
    } else if (key == "const") {
      if (value != inst) Add(path, absl::StrCat("must be ", Short(value), " (got ", Short(inst), ")"));
    } else if (key == "minLength" || key == "maxLength") {
      if (!inst.is_string()) return;
      uint64_t n = CodePoints(inst.get_ref<const std::string&>());
      uint64_t limit = AsCount(value);
      if (key == "minLength" && n < limit) {
        Add(path, absl::StrCat("must be at least ", limit, " characters long (got ", n, ")"));
      } else if (key == "maxLength" && n > limit) {
        Add(path, absl::StrCat("must be at most ", limit, " characters long (got ", n, ")"));
      }
    } else if (key == "pattern") {
      if (!inst.is_string()) return;
      RE2 re(value.get<std::string>(), RE2::Quiet);
      if (!re.ok()) {
        Add(path, absl::StrCat("schema pattern does not compile: ", re.error()));
      } else if (!RE2::PartialMatch(inst.get_ref<const std::string&>(), re)) {
        Add(path, absl::StrCat("must match the pattern ", Short(value)));
      }
    } else if (key == "minimum" || key == "maximum" || key == "exclusiveMinimum" ||
               key == "exclusiveMaximum") {
      if (!inst.is_number()) return;
      int c = CompareNumbers(inst, value);
      bool ok = key == "minimum"            ? c >= 0
                : key == "maximum"          ? c <= 0
                : key == "exclusiveMinimum" ? c > 0
                                            : c < 0;
      if (!ok) {
        const char* rel = key == "minimum"            ? ">="
                          : key == "maximum"          ? "<="
                          : key == "exclusiveMinimum" ? ">"
                                                      : "<";
        Add(path, absl::StrCat("must be ", rel, " ", Short(value), " (got ", Short(inst), ")"));
      }
    } else if (key == "items") {
      if (!inst.is_array()) return;
      if (value.is_array()) {
        for (size_t i = 0; i < inst.size() && i < value.size(); ++i) {
          At(value[i], inst[i], ChildPath(path, i));
        }
      } else {
        for (size_t i = 0; i < inst.size(); ++i) At(value, inst[i], ChildPath(path, i));
      }
    } else if (key == "minItems" || key == "maxItems") {
      if (!inst.is_array()) return;
      uint64_t limit = AsCount(value);
      if (key == "minItems" && inst.size() < limit) {
        Add(path, absl::StrCat("must have at least ", limit, " items (got ", inst.size(), ")"));
      } else if (key == "maxItems" && inst.size() > limit) {
        Add(path, absl::StrCat("must have at most ", limit, " items (got ", inst.size(), ")"));
      }
    } else if (key == "properties") {
      if (!inst.is_object()) return;
      for (const auto& [name, sub] : value.items()) {
        auto it = inst.find(name);
        if (it != inst.end()) At(sub, *it, ChildPath(path, name));
      }
    } else if (key == "required") {
      if (!inst.is_object()) return;
      for (const json& name : value) {
        if (name.is_string() && !inst.contains(name.get<std::string>())) {
          Add(ChildPath(path, name.get<std::string>()), "required property is missing");
        }
      }
    } else if (key == "additionalProperties") {
      if (!inst.is_object()) return;
      auto props = schema.find("properties");
      for (const auto& [name, sub_inst] : inst.items()) {
        if (props != schema.end() && props->is_object() && props->contains(name)) continue;
        if (value.is_boolean() && !value.get<bool>()) {
          Add(ChildPath(path, name), "property is not allowed");
        } else {
          At(value, sub_inst, ChildPath(path, name));
        }
      }
    } else {
      for (const char* a : kAnnotations) {
        if (key == a) return;
      }
      Add(path, absl::StrCat("the schema uses the unsupported keyword '", key, "'"));
    }
  }

  size_t max_;
  std::vector<SchemaViolation> out_;
};

}  // namespace

bool IsSupportedKeyword(const std::string& keyword) {
  for (const char* k : kKeywords) {
    if (keyword == k) return true;
  }
  for (const char* a : kAnnotations) {
    if (keyword == a) return true;
  }
  return false;
}

absl::Status CheckSchema(const json& schema) { return CheckAt(schema, "#"); }

std::vector<SchemaViolation> Validate(const json& schema, const json& instance,
                                      size_t max_violations) {
  Validator v(max_violations == 0 ? 1 : max_violations);
  v.At(schema, instance, "$");
  return v.Take();
}

std::string FormatViolations(const std::vector<SchemaViolation>& violations) {
  return absl::StrJoin(violations, "; ", [](std::string* out, const SchemaViolation& v) {
    absl::StrAppend(out, v.path, ": ", v.message);
  });
}

}  // namespace agent
