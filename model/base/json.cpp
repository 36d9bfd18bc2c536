// SPDX-License-Identifier: MIT
#include "model/base/json.h"

#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>

namespace gapscope::json {

namespace {
const Value kNull;
const std::string kEmpty;
} // namespace

Value::Value(bool b)
    : m_type(Type::Bool)
    , m_bool(b)
{
}
Value::Value(int v)
    : Value(static_cast<long long>(v))
{
}
Value::Value(unsigned v)
    : Value(static_cast<long long>(v))
{
}
Value::Value(long v)
    : Value(static_cast<long long>(v))
{
}
Value::Value(unsigned long v)
    : Value(static_cast<unsigned long long>(v))
{
}
Value::Value(long long v)
    : m_type(Type::Number)
    , m_isInt(true)
    , m_number(static_cast<double>(v))
    , m_int(v)
{
}
Value::Value(unsigned long long v)
    : m_type(Type::Number)
    , m_isInt(v <= static_cast<unsigned long long>(INT64_MAX))
    , m_number(static_cast<double>(v))
    , m_int(static_cast<int64_t>(v))
{
}
Value::Value(double v)
    : m_type(Type::Number)
    , m_number(v)
{
}
Value::Value(const char* s)
    : m_type(Type::String)
    , m_string(s ? s : "")
{
}
Value::Value(std::string s)
    : m_type(Type::String)
    , m_string(std::move(s))
{
}
Value::Value(std::string_view s)
    : m_type(Type::String)
    , m_string(s)
{
}

Value Value::array()
{
    Value v;
    v.m_type = Type::Array;
    return v;
}

Value Value::object()
{
    Value v;
    v.m_type = Type::Object;
    return v;
}

int64_t Value::toInt(int64_t fallback) const
{
    if (m_type != Type::Number)
        return fallback;
    if (m_isInt)
        return m_int;
    if (!std::isfinite(m_number) || std::fabs(m_number) > 9.2e18)
        return fallback;
    return static_cast<int64_t>(m_number);
}

const std::string& Value::toString() const { return m_type == Type::String ? m_string : kEmpty; }

std::string Value::toString(std::string_view fallback) const
{
    return m_type == Type::String ? m_string : std::string(fallback);
}

size_t Value::size() const
{
    if (m_type == Type::Array)
        return m_items.size();
    if (m_type == Type::Object)
        return m_members.size();
    return 0;
}

const Value& Value::at(size_t i) const { return (m_type == Type::Array && i < m_items.size()) ? m_items[i] : kNull; }

Value& Value::push(Value v)
{
    if (m_type != Type::Array) {
        *this = array();
    }
    m_items.push_back(std::move(v));
    return m_items.back();
}

const Value* Value::find(std::string_view key) const
{
    if (m_type != Type::Object)
        return nullptr;
    for (const auto& m : m_members)
        if (m.first == key)
            return &m.second;
    return nullptr;
}

const Value& Value::operator[](std::string_view key) const
{
    const Value* v = find(key);
    return v ? *v : kNull;
}

Value& Value::set(std::string key, Value v)
{
    if (m_type != Type::Object)
        *this = object();
    for (auto& m : m_members)
        if (m.first == key) {
            m.second = std::move(v);
            return m.second;
        }
    m_members.emplace_back(std::move(key), std::move(v));
    return m_members.back().second;
}

// ---------------------------------------------------------------------------------------------
// Parser

namespace {

class Parser {
public:
    Parser(std::string_view text, std::string_view what)
        : m_text(text)
        , m_what(what)
    {
    }

    Expected<Value> run()
    {
        Value v;
        skipSpace();
        if (!parseValue(v, 0))
            return Status::error(m_error);
        skipSpace();
        if (m_pos != m_text.size()) {
            fail("unexpected text after the JSON value");
            return Status::error(m_error);
        }
        return v;
    }

private:
    bool fail(const std::string& what)
    {
        if (!m_error.empty())
            return false;
        size_t line = 1, col = 1;
        for (size_t i = 0; i < m_pos && i < m_text.size(); ++i) {
            if (m_text[i] == '\n') {
                ++line;
                col = 1;
            } else {
                ++col;
            }
        }
        m_error = std::string(m_what) + ": line " + std::to_string(line) + " column " + std::to_string(col)
            + " (byte offset " + std::to_string(m_pos) + "): " + what;
        return false;
    }

    void skipSpace()
    {
        while (m_pos < m_text.size()) {
            char c = m_text[m_pos];
            if (c == ' ' || c == '\t' || c == '\n' || c == '\r')
                ++m_pos;
            else
                break;
        }
    }

    bool literal(std::string_view word)
    {
        if (m_text.substr(m_pos, word.size()) != word)
            return fail("invalid literal");
        m_pos += word.size();
        return true;
    }

    bool parseValue(Value& out, int depth)
    {
        if (depth > kMaxDepth)
            return fail("nesting deeper than " + std::to_string(kMaxDepth));
        if (m_pos >= m_text.size())
            return fail("unexpected end of input");
        char c = m_text[m_pos];
        switch (c) {
        case '{':
            return parseObject(out, depth);
        case '[':
            return parseArray(out, depth);
        case '"': {
            std::string s;
            if (!parseString(s))
                return false;
            out = Value(std::move(s));
            return true;
        }
        case 't':
            out = Value(true);
            return literal("true");
        case 'f':
            out = Value(false);
            return literal("false");
        case 'n':
            out = Value();
            return literal("null");
        default:
            if (c == '-' || (c >= '0' && c <= '9'))
                return parseNumber(out);
            // Python's json.dumps writes these for non-finite floats; accept them.
            if (m_text.substr(m_pos, 3) == "NaN") {
                m_pos += 3;
                out = Value(std::nan(""));
                return true;
            }
            if (m_text.substr(m_pos, 8) == "Infinity") {
                m_pos += 8;
                out = Value(HUGE_VAL);
                return true;
            }
            return fail(std::string("unexpected character '") + c + "'");
        }
    }

    bool parseObject(Value& out, int depth)
    {
        out = Value::object();
        ++m_pos; // {
        skipSpace();
        if (m_pos < m_text.size() && m_text[m_pos] == '}') {
            ++m_pos;
            return true;
        }
        while (true) {
            skipSpace();
            if (m_pos >= m_text.size() || m_text[m_pos] != '"')
                return fail("expected a string key");
            std::string key;
            if (!parseString(key))
                return false;
            skipSpace();
            if (m_pos >= m_text.size() || m_text[m_pos] != ':')
                return fail("expected ':' after key");
            ++m_pos;
            skipSpace();
            Value v;
            if (!parseValue(v, depth + 1))
                return false;
            out.set(std::move(key), std::move(v));
            skipSpace();
            if (m_pos >= m_text.size())
                return fail("unexpected end of input in object");
            if (m_text[m_pos] == ',') {
                ++m_pos;
                continue;
            }
            if (m_text[m_pos] == '}') {
                ++m_pos;
                return true;
            }
            return fail("expected ',' or '}' in object");
        }
    }

    bool parseArray(Value& out, int depth)
    {
        out = Value::array();
        ++m_pos; // [
        skipSpace();
        if (m_pos < m_text.size() && m_text[m_pos] == ']') {
            ++m_pos;
            return true;
        }
        while (true) {
            skipSpace();
            Value v;
            if (!parseValue(v, depth + 1))
                return false;
            out.push(std::move(v));
            skipSpace();
            if (m_pos >= m_text.size())
                return fail("unexpected end of input in array");
            if (m_text[m_pos] == ',') {
                ++m_pos;
                continue;
            }
            if (m_text[m_pos] == ']') {
                ++m_pos;
                return true;
            }
            return fail("expected ',' or ']' in array");
        }
    }

    static void appendUtf8(std::string& s, uint32_t cp)
    {
        if (cp < 0x80) {
            s += static_cast<char>(cp);
        } else if (cp < 0x800) {
            s += static_cast<char>(0xC0 | (cp >> 6));
            s += static_cast<char>(0x80 | (cp & 0x3F));
        } else if (cp < 0x10000) {
            s += static_cast<char>(0xE0 | (cp >> 12));
            s += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
            s += static_cast<char>(0x80 | (cp & 0x3F));
        } else {
            s += static_cast<char>(0xF0 | (cp >> 18));
            s += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
            s += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
            s += static_cast<char>(0x80 | (cp & 0x3F));
        }
    }

    bool hex4(uint32_t& out)
    {
        if (m_pos + 4 > m_text.size())
            return fail("truncated \\u escape");
        out = 0;
        for (int i = 0; i < 4; ++i) {
            char c = m_text[m_pos++];
            out <<= 4;
            if (c >= '0' && c <= '9')
                out |= uint32_t(c - '0');
            else if (c >= 'a' && c <= 'f')
                out |= uint32_t(c - 'a' + 10);
            else if (c >= 'A' && c <= 'F')
                out |= uint32_t(c - 'A' + 10);
            else
                return fail("invalid hex digit in \\u escape");
        }
        return true;
    }

    bool parseString(std::string& out)
    {
        ++m_pos; // opening quote
        while (true) {
            size_t runStart = m_pos;
            while (m_pos < m_text.size() && m_text[m_pos] != '"' && m_text[m_pos] != '\\'
                && static_cast<unsigned char>(m_text[m_pos]) >= 0x20)
                ++m_pos;
            out.append(m_text.data() + runStart, m_pos - runStart);
            if (m_pos >= m_text.size())
                return fail("unterminated string");
            char c = m_text[m_pos];
            if (c == '"') {
                ++m_pos;
                return true;
            }
            if (static_cast<unsigned char>(c) < 0x20)
                return fail("control character in string");
            ++m_pos; // backslash
            if (m_pos >= m_text.size())
                return fail("unterminated escape");
            char e = m_text[m_pos++];
            switch (e) {
            case '"': out += '"'; break;
            case '\\': out += '\\'; break;
            case '/': out += '/'; break;
            case 'b': out += '\b'; break;
            case 'f': out += '\f'; break;
            case 'n': out += '\n'; break;
            case 'r': out += '\r'; break;
            case 't': out += '\t'; break;
            case 'u': {
                uint32_t cp;
                if (!hex4(cp))
                    return false;
                if (cp >= 0xD800 && cp <= 0xDBFF && m_text.substr(m_pos, 2) == "\\u") {
                    m_pos += 2;
                    uint32_t lo;
                    if (!hex4(lo))
                        return false;
                    if (lo >= 0xDC00 && lo <= 0xDFFF)
                        cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
                    else
                        cp = 0xFFFD;
                } else if (cp >= 0xD800 && cp <= 0xDFFF) {
                    cp = 0xFFFD;
                }
                appendUtf8(out, cp);
                break;
            }
            default:
                --m_pos;
                return fail("invalid escape sequence");
            }
        }
    }

    bool parseNumber(Value& out)
    {
        size_t start = m_pos;
        bool isInt = true;
        if (m_text[m_pos] == '-')
            ++m_pos;
        auto digits = [&] {
            size_t s = m_pos;
            while (m_pos < m_text.size() && m_text[m_pos] >= '0' && m_text[m_pos] <= '9')
                ++m_pos;
            return m_pos > s;
        };
        if (!digits())
            return fail("invalid number");
        if (m_pos < m_text.size() && m_text[m_pos] == '.') {
            isInt = false;
            ++m_pos;
            if (!digits())
                return fail("invalid number: digits expected after '.'");
        }
        if (m_pos < m_text.size() && (m_text[m_pos] == 'e' || m_text[m_pos] == 'E')) {
            isInt = false;
            ++m_pos;
            if (m_pos < m_text.size() && (m_text[m_pos] == '+' || m_text[m_pos] == '-'))
                ++m_pos;
            if (!digits())
                return fail("invalid number: digits expected in exponent");
        }
        const char* b = m_text.data() + start;
        const char* e = m_text.data() + m_pos;
        if (isInt) {
            long long v = 0;
            auto r = std::from_chars(b, e, v);
            if (r.ec == std::errc() && r.ptr == e) {
                out = Value(v);
                return true;
            }
        }
        // strtod needs a terminated string; numbers are short.
        std::string tmp(b, e);
        out = Value(std::strtod(tmp.c_str(), nullptr));
        return true;
    }

    std::string_view m_text;
    std::string_view m_what;
    size_t m_pos = 0;
    std::string m_error;
};

void writeNumber(std::string& out, const Value& v)
{
    if (v.isInteger()) {
        out += std::to_string(v.toInt());
        return;
    }
    double d = v.toDouble();
    if (!std::isfinite(d)) {
        out += "null";
        return;
    }
    char buf[32];
    // Shortest round-trip representation.
    auto r = std::to_chars(buf, buf + sizeof buf, d);
    out.append(buf, r.ptr);
}

void writeValue(std::string& out, const Value& v, int indent, int level)
{
    auto newline = [&](int l) {
        if (indent < 0)
            return;
        out += '\n';
        out.append(size_t(indent * l), ' ');
    };
    switch (v.type()) {
    case Value::Type::Null: out += "null"; break;
    case Value::Type::Bool: out += v.toBool() ? "true" : "false"; break;
    case Value::Type::Number: writeNumber(out, v); break;
    case Value::Type::String: appendEscaped(out, v.toString()); break;
    case Value::Type::Array:
        if (v.items().empty()) {
            out += "[]";
            break;
        }
        out += '[';
        for (size_t i = 0; i < v.items().size(); ++i) {
            if (i)
                out += ',';
            newline(level + 1);
            writeValue(out, v.items()[i], indent, level + 1);
        }
        newline(level);
        out += ']';
        break;
    case Value::Type::Object:
        if (v.members().empty()) {
            out += "{}";
            break;
        }
        out += '{';
        for (size_t i = 0; i < v.members().size(); ++i) {
            if (i)
                out += ',';
            newline(level + 1);
            appendEscaped(out, v.members()[i].first);
            out += indent < 0 ? ":" : ": ";
            writeValue(out, v.members()[i].second, indent, level + 1);
        }
        newline(level);
        out += '}';
        break;
    }
}

} // namespace

Expected<Value> parse(std::string_view text, std::string_view what) { return Parser(text, what).run(); }

Expected<Value> parseFile(const std::string& path)
{
    std::ifstream in(path, std::ios::binary);
    if (!in)
        return Status::error(path + ": cannot open for reading");
    std::ostringstream ss;
    ss << in.rdbuf();
    return parse(ss.str(), path);
}

void appendEscaped(std::string& out, std::string_view s)
{
    out += '"';
    for (char c : s) {
        switch (c) {
        case '"': out += "\\\""; break;
        case '\\': out += "\\\\"; break;
        case '\n': out += "\\n"; break;
        case '\r': out += "\\r"; break;
        case '\t': out += "\\t"; break;
        case '\b': out += "\\b"; break;
        case '\f': out += "\\f"; break;
        default:
            if (static_cast<unsigned char>(c) < 0x20) {
                char buf[8];
                std::snprintf(buf, sizeof buf, "\\u%04x", static_cast<unsigned>(static_cast<unsigned char>(c)));
                out += buf;
            } else {
                out += c;
            }
        }
    }
    out += '"';
}

std::string write(const Value& value, int indent)
{
    std::string out;
    writeValue(out, value, indent, 0);
    if (indent >= 0)
        out += '\n';
    return out;
}

} // namespace gapscope::json
