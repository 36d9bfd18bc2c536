// SPDX-License-Identifier: MIT
#include "model/open/traceopen.h"

#include "model/format/regularfile.h"
#include "model/format/tracereader.h"
#include "model/import/importer.h"
#include "model/open/tracemerger.h"
#include "model/open/tracereaders.h"
#include "model/steps/stepfinder.h"

#include <fstream>

namespace gapscope::model {

bool isGapscopeFile(const std::string& path)
{
    std::ifstream in(path, std::ios::binary);
    char magic[8] = {};
    in.read(magic, sizeof magic);
    return in.gcount() == sizeof magic && format::TraceReader::hasMagic(magic, sizeof magic);
}

Status findSteps(Trace& trace, const std::string& rule)
{
    auto r = StepRule::parse(rule.empty() ? std::string("auto") : rule);
    if (!r)
        return r.status();
    StepFinder(*r, rule.empty()).find(trace);
    return Status::ok();
}

namespace {

Expected<Trace> readParts(const std::vector<std::string>& paths, const ReadOptions& options);

} // namespace

Expected<Trace> openTrace(const std::vector<std::string>& paths, const ReadOptions& options)
{
    if (options.detectSteps && !options.stepRule.empty()) // a wrong rule fails before any file is read
        if (auto r = StepRule::parse(options.stepRule); !r)
            return r.status();
    auto trace = readParts(paths, options);
    if (!trace || !options.detectSteps || options.window())
        return trace;
    if (Status s = findSteps(*trace, stepRuleFor(*trace, options.stepRule)); !s)
        return s;
    return trace;
}

std::string stepRuleFor(Trace& trace, const std::string& asked)
{
    const std::string& saved = trace.annotations().stepRule;
    if (!asked.empty() || saved.empty())
        return asked;
    if (auto r = StepRule::parse(saved); !r) {
        trace.addWarning("annotations: the saved step rule is not one: " + r.error() + "; the default is used");
        return {};
    }
    return saved;
}

std::string savedStepRule(const format::TraceReader& reader)
{
    const AnnotationSet a = readAnnotations(reader);
    return !a.stepRule.empty() && StepRule::parse(a.stepRule) ? a.stepRule : std::string();
}

namespace {

Expected<Trace> readParts(const std::vector<std::string>& paths, const ReadOptions& options)
{
    if (paths.empty())
        return Status::error("no trace file given");
    for (const auto& p : paths) // before anything opens it: a FIFO would block, a directory is no trace
        if (Status s = format::checkRegularFile(p); !s)
            return s;
    // Files by reader: a reader that opens several files at once gets all of its files as one part.
    std::vector<const TraceReaderEntry*> readers;
    std::vector<std::vector<std::string>> parts;
    for (const auto& p : paths) {
        const TraceReaderEntry* r = TraceReaders::find(p);
        if (!r) {
            std::ifstream f(p, std::ios::binary | std::ios::ate);
            if (f && f.tellg() == 0)
                return Status::error(p + ": an empty file (0 bytes): nothing to import");
            return Status::error(
                p + ": not a .gapscope trace, and no importer recognises it (" + importableFormats() + ")");
        }
        size_t k = 0;
        while (k < readers.size() && !(r->several && readers[k] == r))
            ++k;
        if (k == readers.size()) {
            readers.push_back(r);
            parts.emplace_back();
        }
        parts[k].push_back(p);
    }
    if (parts.size() == 1)
        return readers[0]->open(parts[0], options);
    std::vector<Trace> traces;
    std::vector<std::string> names;
    for (size_t k = 0; k < parts.size(); ++k) {
        ReadOptions o = options;
        if (options.progress) // part k covers [k/n, (k+1)/n) of the whole
            o.progress = [&options, k = static_cast<double>(k), n = static_cast<double>(parts.size())](
                             double f) { return options.progress((k + f) / n); };
        auto t = readers[k]->open(parts[k], o);
        if (!t)
            return t.status();
        traces.push_back(std::move(*t));
        names.push_back(parts[k].front());
    }
    return TraceMerger::merge(std::move(traces), names);
}

} // namespace

} // namespace gapscope::model
