// SPDX-License-Identifier: MIT
#pragma once

// A small JSON document model for the inputs and outputs gapscope owns: Hugging Face config.json,
// hardware presets and calibration profiles, ground-truth files, and the --json output of the CLI.
// Large traces (Kineto JSON) are not read through this: the importers stream them with simdjson.
//
// Parsing never throws and never recurses deeper than kMaxDepth; errors name the input, the line,
// the column and the byte offset. Objects keep their members in input order. Not thread-safe to
// mutate; const access is safe from any thread.

#include "model/base/status.h"

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace gapscope::json {

class Value {
public:
    enum class Type { Null, Bool, Number, String, Array, Object };
    using Member = std::pair<std::string, Value>;

    Value() = default;
    Value(std::nullptr_t) { }
    Value(bool b);
    Value(int v);
    Value(unsigned v);
    Value(long v);
    Value(unsigned long v);
    Value(long long v);
    Value(unsigned long long v);
    Value(double v);
    Value(const char* s);
    Value(std::string s);
    Value(std::string_view s);
    static Value array();
    static Value object();

    Type type() const { return m_type; }
    bool isNull() const { return m_type == Type::Null; }
    bool isBool() const { return m_type == Type::Bool; }
    bool isNumber() const { return m_type == Type::Number; }
    bool isString() const { return m_type == Type::String; }
    bool isArray() const { return m_type == Type::Array; }
    bool isObject() const { return m_type == Type::Object; }
    // True when the number was written without fraction or exponent and fits int64.
    bool isInteger() const { return m_type == Type::Number && m_isInt; }

    bool toBool(bool fallback = false) const { return m_type == Type::Bool ? m_bool : fallback; }
    double toDouble(double fallback = 0) const { return m_type == Type::Number ? m_number : fallback; }
    int64_t toInt(int64_t fallback = 0) const;
    const std::string& toString() const; // empty string unless a string
    std::string toString(std::string_view fallback) const;

    // Arrays.
    size_t size() const; // array elements or object members
    const Value& at(size_t i) const;
    const std::vector<Value>& items() const { return m_items; }
    Value& push(Value v);

    // Objects. find() returns nullptr when absent; operator[] returns a null Value when absent.
    const Value* find(std::string_view key) const;
    const Value& operator[](std::string_view key) const;
    bool contains(std::string_view key) const { return find(key) != nullptr; }
    const std::vector<Member>& members() const { return m_members; }
    Value& set(std::string key, Value v); // replaces an existing member

private:
    Type m_type = Type::Null;
    bool m_bool = false;
    bool m_isInt = false;
    double m_number = 0;
    int64_t m_int = 0;
    std::string m_string;
    std::vector<Value> m_items;
    std::vector<Member> m_members;
};

constexpr int kMaxDepth = 256;

// `what` names the input in error messages ("config.json").
Expected<Value> parse(std::string_view text, std::string_view what = "JSON");
Expected<Value> parseFile(const std::string& path);

// Compact when indent < 0, else pretty-printed with `indent` spaces. Numbers print with up to 17
// significant digits; integers print exactly; NaN/Inf print as null.
std::string write(const Value& value, int indent = 2);
void appendEscaped(std::string& out, std::string_view s); // JSON string literal with quotes

} // namespace gapscope::json
