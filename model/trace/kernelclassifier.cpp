// SPDX-License-Identifier: MIT
#include "model/trace/kernelclassifier.h"

#include "model/trace/budgetcomponent.h"

#include <algorithm>
#include <cassert>

namespace gapscope::model {

extern const char* const kDefaultClassifierJson; // generated from resources/classifier/default.json

namespace {

std::string trim(std::string_view s)
{
    size_t a = 0, b = s.size();
    while (a < b && (s[a] == ' ' || s[a] == '\t'))
        ++a;
    while (b > a && (s[b - 1] == ' ' || s[b - 1] == '\t'))
        --b;
    return std::string(s.substr(a, b - a));
}

// A budget component a kernel class may hold (launch_host is GPU idle time, not kernel time).
bool isKernelComponent(const std::string& name)
{
    Component c;
    return parseComponent(name, c) && componentInfo(c).role == ComponentRole::Kernels;
}

bool isIdleComponent(const std::string& name)
{
    Component c;
    return parseComponent(name, c) && componentInfo(c).role == ComponentRole::HostIdle;
}

// "NAME" or "NAME=a+b+c" -> name and components.
Status parseComponent(const std::string& text, KernelClassifier::Class& out)
{
    auto eq = text.find('=');
    out.name = trim(std::string_view(text).substr(0, eq));
    out.components.clear();
    if (out.name.empty())
        return Status::error("empty class name in component '" + text + "'");
    if (isIdleComponent(out.name))
        return Status::error("'" + out.name + "' is GPU idle time, not a kernel class");
    if (eq == std::string::npos) {
        if (isKernelComponent(out.name))
            out.components.push_back(out.name);
        return Status::ok();
    }
    std::string_view rest = std::string_view(text).substr(eq + 1);
    while (true) {
        auto plus = rest.find('+');
        std::string c = trim(rest.substr(0, plus));
        if (!isKernelComponent(c))
            return Status::error("unknown budget component '" + c + "' in '" + text + "'");
        if (std::find(out.components.begin(), out.components.end(), c) == out.components.end())
            out.components.push_back(c);
        if (plus == std::string_view::npos)
            break;
        rest = rest.substr(plus + 1);
    }
    return Status::ok();
}

} // namespace

const std::vector<std::string>& KernelClassifier::budgetComponentNames()
{
    static const std::vector<std::string> names = [] {
        std::vector<std::string> n;
        for (const auto& c : kComponents)
            n.push_back(c.name);
        return n;
    }();
    return names;
}

Status KernelClassifier::addClass(const Rule& rule, size_t ruleIndex, int& classIndex)
{
    Class c;
    if (Status s = parseComponent(rule.component, c); !s)
        return s.withContext("rule " + std::to_string(ruleIndex + 1));
    bool explicitComponents = rule.component.find('=') != std::string::npos;
    classIndex = findClass(c.name);
    if (classIndex >= 0) {
        Class& existing = m_classes[size_t(classIndex)];
        if (explicitComponents && c.components != existing.components)
            return Status::error("rule " + std::to_string(ruleIndex + 1) + ": class '" + c.name
                + "' is defined with different components by an earlier rule");
        return Status::ok();
    }
    for (const auto& comp : c.components)
        for (const auto& other : m_classes)
            if (std::find(other.components.begin(), other.components.end(), comp) != other.components.end())
                return Status::error("rule " + std::to_string(ruleIndex + 1) + ": budget component '" + comp
                    + "' is in both class '" + other.name + "' and class '" + c.name + "'");
    classIndex = int(m_classes.size());
    if (c.name == kCollectivesClass)
        m_collectives = classIndex;
    m_classes.push_back(std::move(c));
    return Status::ok();
}

Expected<KernelClassifier> KernelClassifier::fromRules(std::vector<Rule> rules, std::string origin)
{
    KernelClassifier k;
    k.m_origin = std::move(origin);
    for (size_t i = 0; i < rules.size(); ++i) {
        const Rule& r = rules[i];
        if (r.pattern.empty())
            return Status::error(k.m_origin + ": rule " + std::to_string(i + 1) + ": empty pattern");
        auto m = PatternMatcher::compile(r.pattern);
        if (!m)
            return m.status().withContext(k.m_origin + ": rule " + std::to_string(i + 1));
        k.m_matchers.push_back(std::move(m).value());
        int cls = -1;
        if (Status s = k.addClass(r, i, cls); !s)
            return s.withContext(k.m_origin);
        k.m_ruleClass.push_back(cls);
    }
    k.m_rules = std::move(rules);
    return k;
}

Expected<KernelClassifier> KernelClassifier::fromJson(const json::Value& doc, std::string origin)
{
    const json::Value* rules = doc.isObject() ? doc.find("rules") : (doc.isArray() ? &doc : nullptr);
    if (!rules || !rules->isArray())
        return Status::error(origin + ": expected an object with a \"rules\" array");
    std::vector<Rule> out;
    for (size_t i = 0; i < rules->size(); ++i) {
        const json::Value& r = rules->at(i);
        const json::Value* p = r.isObject() ? r.find("pattern") : nullptr;
        const json::Value* c = r.isObject() ? r.find("component") : nullptr;
        if (!p || !p->isString() || !c || !c->isString())
            return Status::error(
                origin + ": rule " + std::to_string(i + 1) + ": needs string members \"pattern\" and \"component\"");
        out.push_back(Rule { p->toString(), c->toString(), r["note"].toString() });
    }
    return fromRules(std::move(out), std::move(origin));
}

Expected<KernelClassifier> KernelClassifier::fromFile(const std::string& path)
{
    auto doc = json::parseFile(path);
    if (!doc)
        return doc.status();
    return fromJson(*doc, path);
}

Expected<KernelClassifier> KernelClassifier::fromTable(const ClassifierTable& table)
{
    std::vector<Rule> rules;
    for (const auto& r : table.rules)
        rules.push_back(Rule { r.pattern, r.component, {} });
    return fromRules(std::move(rules), table.origin.empty() ? std::string("stored classifier") : table.origin);
}

std::string_view KernelClassifier::builtinDefaultJson()
{
    return kDefaultClassifierJson;
}

const KernelClassifier& KernelClassifier::builtinDefault()
{
    static const KernelClassifier k = [] {
        auto doc = json::parse(kDefaultClassifierJson, "default classifier");
        auto c = doc ? fromJson(*doc, "default") : Expected<KernelClassifier>(doc.status());
        // The default table is tested; a broken one is a build defect, not a user error.
        assert(c.hasValue());
        return c ? std::move(c).value() : KernelClassifier();
    }();
    return k;
}

ClassifierTable KernelClassifier::toTable() const
{
    ClassifierTable t;
    t.origin = m_origin;
    for (const auto& r : m_rules)
        t.rules.push_back(ClassifierRule { r.pattern, r.component });
    return t;
}

json::Value KernelClassifier::toJson() const
{
    json::Value doc = json::Value::object();
    doc.set("kind", "gapscope-classifier");
    doc.set("version", 1);
    doc.set("origin", m_origin);
    json::Value rules = json::Value::array();
    for (const auto& r : m_rules) {
        json::Value o = json::Value::object();
        o.set("pattern", r.pattern);
        o.set("component", r.component);
        if (!r.note.empty())
            o.set("note", r.note);
        rules.push(std::move(o));
    }
    doc.set("rules", std::move(rules));
    return doc;
}

int KernelClassifier::matchRule(std::string_view name) const
{
    for (size_t i = 0; i < m_matchers.size(); ++i)
        if (m_matchers[i].search(name))
            return int(i);
    return -1;
}

int KernelClassifier::classify(std::string_view name) const
{
    int r = matchRule(name);
    return r < 0 ? kUnclassified : m_ruleClass[size_t(r)];
}

int KernelClassifier::findClass(std::string_view name) const
{
    for (size_t i = 0; i < m_classes.size(); ++i)
        if (m_classes[i].name == name)
            return int(i);
    return -1;
}

} // namespace gapscope::model
