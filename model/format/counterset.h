// SPDX-License-Identifier: MIT
#pragma once

// CounterSet: loss and anomaly counters (stats.h) gathered from several sources and added up by
// (name, rank), the one rule for it: the loader's chunks and decode threads, the chunk importer,
// the overview builder, the capture's streamed counters and the trace merger's parts all keep theirs
// here.
//
// Rule: a counter adds its value to the one already held under its name and rank (uint64_t,
// wrapping); the first counter of a key keeps its severity and detail. The detail is not part of the
// key. stats.h gives no counter a way of its own to combine, so every kind adds up, the few whose
// value is a most or a version too (rank_rss_growth_mb, step_work_after_settle_max_us,
// nccl_profiler_plugin_version): a rank reports those once per capture, in its header, not per chunk.
//
// Order: sorted() gives the counters by name (byte order), then rank (-1, not rank-specific, first),
// the order files and reports hold; inOrderAdded() in the order their keys first came.
//
// C is a pb::Counter (its accessors) or a struct with fields name, rank and value (model::Counter);
// CounterTraits says how to read either. Not thread-safe: one set per thread, joined with add(set).

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace gapscope::pb {
class Counter;
}

namespace gapscope::format {

// A counter struct with plain fields (the model's Counter).
template <typename C> struct CounterTraits {
    static const std::string& name(const C& c) { return c.name; }
    static int32_t rank(const C& c) { return c.rank; }
    static uint64_t value(const C& c) { return c.value; }
    static void setValue(C& c, uint64_t v) { c.value = v; }
};

// The file format's Counter (counterset.cpp, so that this header needs no protobuf).
template <> struct CounterTraits<pb::Counter> {
    static const std::string& name(const pb::Counter& c);
    static int32_t rank(const pb::Counter& c);
    static uint64_t value(const pb::Counter& c);
    static void setValue(pb::Counter& c, uint64_t v);
};

template <typename C> class CounterSet {
public:
    using Traits = CounterTraits<C>;

    void add(const C& c)
    {
        auto [it, fresh] = m_index.try_emplace(Key(Traits::name(c), Traits::rank(c)), m_counters.size());
        if (fresh) {
            m_counters.push_back(c);
            return;
        }
        C& held = m_counters[it->second];
        Traits::setValue(held, Traits::value(held) + Traits::value(c));
    }
    // Another set's counters, in the order they came to it (one decode thread's, one part's).
    void add(const CounterSet& other)
    {
        for (const C& c : other.m_counters)
            add(c);
    }

    bool empty() const { return m_counters.empty(); }
    size_t size() const { return m_counters.size(); }
    void clear()
    {
        m_counters.clear();
        m_index.clear();
    }

    // By name, then rank.
    std::vector<C> sorted() const
    {
        std::vector<C> out;
        out.reserve(m_counters.size());
        for (const auto& [key, i] : m_index)
            out.push_back(m_counters[i]);
        return out;
    }
    // In the order their keys first came.
    const std::vector<C>& inOrderAdded() const { return m_counters; }

private:
    using Key = std::pair<std::string, int32_t>; // (name, rank)
    std::vector<C> m_counters; // one per key, in the order the keys first came
    std::map<Key, size_t> m_index; // key -> its counter in m_counters
};

} // namespace gapscope::format
