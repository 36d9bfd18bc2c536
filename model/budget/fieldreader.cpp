// SPDX-License-Identifier: MIT
#include "model/budget/fieldreader.h"

#include <cmath>

namespace gapscope::model {

FieldReader::FieldReader(const json::Value& object, std::string what)
    : m_object(object)
    , m_what(std::move(what))
{
    if (!object.isObject())
        m_status = Status::error(m_what + ": expected a JSON object, got " + describeJson(object));
}

const json::Value* FieldReader::member(const char* key) const
{
    if (!m_object.isObject())
        return nullptr;
    const json::Value* v = m_object.find(key);
    return (v && !v->isNull()) ? v : nullptr;
}

bool FieldReader::has(const char* key) const
{
    return member(key) != nullptr;
}

void FieldReader::fail(const std::string& key, const std::string& message)
{
    if (m_status.isOk())
        m_status = Status::error(m_what + ": " + key + ": " + message);
}

uint64_t FieldReader::u64(const char* key, uint64_t fallback, uint64_t lo, uint64_t hi)
{
    const json::Value* v = member(key);
    if (!v)
        return fallback;
    double d = v->toDouble(NAN);
    bool integral = v->isNumber() && std::isfinite(d) && d == std::floor(d);
    if (!integral || d < static_cast<double>(lo) || d > static_cast<double>(hi)) {
        fail(key,
            "expected an integer in [" + std::to_string(lo) + ", " + std::to_string(hi) + "], got " + describeJson(*v));
        return fallback;
    }
    return v->isInteger() ? static_cast<uint64_t>(v->toInt()) : static_cast<uint64_t>(d);
}

double FieldReader::number(const char* key, double fallback, double lo, double hi)
{
    const json::Value* v = member(key);
    if (!v)
        return fallback;
    double d = v->toDouble(NAN);
    if (!v->isNumber() || !std::isfinite(d) || d < lo || d > hi) {
        fail(key,
            "expected a number in [" + json::write(json::Value(lo), -1) + ", " + json::write(json::Value(hi), -1)
                + "], got " + describeJson(*v));
        return fallback;
    }
    return d;
}

bool FieldReader::boolean(const char* key, bool fallback)
{
    const json::Value* v = member(key);
    if (!v)
        return fallback;
    if (!v->isBool()) {
        fail(key, "expected true or false, got " + describeJson(*v));
        return fallback;
    }
    return v->toBool();
}

std::string FieldReader::string(const char* key, const std::string& fallback)
{
    const json::Value* v = member(key);
    if (!v)
        return fallback;
    if (!v->isString()) {
        fail(key, "expected a string, got " + describeJson(*v));
        return fallback;
    }
    return v->toString();
}

std::vector<std::string> FieldReader::strings(const char* key, size_t maxItems)
{
    std::vector<std::string> out;
    const json::Value* v = array(key);
    if (!v)
        return out;
    if (v->size() > maxItems) {
        fail(key, "more than " + std::to_string(maxItems) + " entries");
        return out;
    }
    for (size_t i = 0; i < v->size(); ++i) {
        if (!v->at(i).isString()) {
            fail(std::string(key) + "[" + std::to_string(i) + "]", "expected a string, got " + describeJson(v->at(i)));
            return {};
        }
        out.push_back(v->at(i).toString());
    }
    return out;
}

const json::Value* FieldReader::object(const char* key)
{
    const json::Value* v = member(key);
    if (v && !v->isObject()) {
        fail(key, "expected an object, got " + describeJson(*v));
        return nullptr;
    }
    return v;
}

const json::Value* FieldReader::array(const char* key)
{
    const json::Value* v = member(key);
    if (v && !v->isArray()) {
        fail(key, "expected an array, got " + describeJson(*v));
        return nullptr;
    }
    return v;
}

std::string describeJson(const json::Value& v)
{
    switch (v.type()) {
    case json::Value::Type::Array:
        return "an array";
    case json::Value::Type::Object:
        return "an object";
    default:
        break;
    }
    std::string s = json::write(v, -1);
    if (s.size() > 40)
        s = s.substr(0, 37) + "...";
    return s;
}

} // namespace gapscope::model
