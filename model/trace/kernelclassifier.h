// SPDX-License-Identifier: MIT
#pragma once

// KernelClassifier: kernel name -> analysis class, through an ordered, editable table of regular
// expressions (resources/classifier/default.json is the default; a user file replaces it; the table
// used is stored with the trace as a ClassifierTable, tracemeta.h).
//
// Rules: ECMAScript regex (PatternMatcher), case-insensitive, searched anywhere in the name; the first rule that
// matches wins; no match = unclassified (-1). A rule's `component` names its class:
//   "NAME"              a class whose budget is the budget component NAME (attention, indexer,
//                       dense_ffn, router, shared_experts, routed_experts, lm_head, embedding,
//                       kv_cache, collectives, sampling, other); any other NAME is a class with no
//                       budget of its own.
//   "NAME=c1+c2+..."    a class whose budget is the sum of the budget components c1, c2, ...
// Classes are numbered in order of first appearance. A budget component belongs to at most one
// class (an error otherwise), so the budget bars add up to the budget total. "launch_host" is not a
// kernel class (launch/host time is GPU idle time).
//
// Cost: one regex search per rule for each *distinct* name; callers classify interned names once
// (NameClasses in gapanalyzer.h), never per event.
//
// Threading: immutable after construction; classify() is const and safe from any thread.

#include "model/base/json.h"
#include "model/base/patternmatcher.h"
#include "model/base/status.h"
#include "model/trace/tracemeta.h"

#include <string>
#include <string_view>
#include <vector>

namespace gapscope::model {

class KernelClassifier {
public:
    static constexpr int kUnclassified = -1;

    struct Rule {
        std::string pattern;
        std::string component; // "NAME" or "NAME=c1+c2"
        std::string note; // free text, kept in JSON only
    };

    struct Class {
        std::string name;
        std::vector<std::string> components; // budget components; empty: no budget of its own
    };

    // The class that receives collective kernels (its time is split into wire and wait).
    static constexpr const char* kCollectivesClass = "collectives";

    static Expected<KernelClassifier> fromRules(std::vector<Rule> rules, std::string origin);
    // {"rules": [{"pattern": ..., "component": ..., "note": ...}, ...]}; `origin` names the input.
    static Expected<KernelClassifier> fromJson(const json::Value& doc, std::string origin);
    static Expected<KernelClassifier> fromFile(const std::string& path);
    static Expected<KernelClassifier> fromTable(const ClassifierTable& table);
    // The table in resources/classifier/default.json (compiled into the library).
    static const KernelClassifier& builtinDefault();
    static std::string_view builtinDefaultJson();

    ClassifierTable toTable() const;
    json::Value toJson() const;

    // Index of the first matching rule, or -1.
    int matchRule(std::string_view name) const;
    // Class index of the name, or kUnclassified.
    int classify(std::string_view name) const;

    const std::vector<Rule>& rules() const { return m_rules; }
    const std::vector<Class>& classes() const { return m_classes; }
    int classOfRule(size_t rule) const { return m_ruleClass[rule]; }
    int findClass(std::string_view name) const; // -1 when absent
    int collectivesClass() const { return m_collectives; }
    const std::string& origin() const { return m_origin; }

    // Every budget component name, in the order of model/trace/budgetcomponent.h (kComponents).
    static const std::vector<std::string>& budgetComponentNames();

private:
    KernelClassifier() = default;
    Status addClass(const Rule& rule, size_t ruleIndex, int& classIndex);

    std::string m_origin;
    std::vector<Rule> m_rules;
    std::vector<PatternMatcher> m_matchers;
    std::vector<int> m_ruleClass;
    std::vector<Class> m_classes;
    int m_collectives = -1;
};

} // namespace gapscope::model
