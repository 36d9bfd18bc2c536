// SPDX-License-Identifier: MIT
#ifdef GAPSCOPE_HAVE_SQL
#include "sqlsetup.h"

#include "analysissetup.h"

#include "model/open/traceopen.h"

#include <sys/stat.h>

namespace gapscope::cli {

model::sql::TraceTables::Analysis SqlSource::analysis()
{
    model::sql::TraceTables::Analysis a;
    a.classifier = classifier ? &*classifier : nullptr;
    a.analyzer = [this]() -> const model::GapAnalyzer* {
        if (!analyzer && classifier)
            analyzer = std::make_unique<model::GapAnalyzer>(trace, *classifier, budget, options);
        return analyzer.get();
    };
    a.host = [this]() -> const model::HostAttribution* {
        if (!host && analyzer) {
            model::GapAnalyzer::Selection all;
            all.kind = model::GapAnalyzer::Selection::Kind::Steps;
            all.rank = model::GapAnalyzer::kCriticalRank;
            host = std::make_unique<model::HostAttribution>(*analyzer, all, true);
        }
        return host.get();
    };
    return a;
}

Expected<std::unique_ptr<SqlSource>> openSqlSource(
    const ArgParser& p, const AnalysisFlags& f, const std::vector<std::string>& files)
{
    model::ReadOptions ro;
    ro.stepRule = f.stepRule;
    ro.laneSummaries = false; // the tables walk the events themselves
    auto opened = model::openTrace(files, ro);
    if (!opened)
        return opened.status();
    auto s = std::make_unique<SqlSource>();
    s->trace = std::move(opened).value();
    if (Status st = setUpAnalysis(p, f, s->trace, s->classifier, s->budget, s->options); !st)
        return st;
    return s;
}

model::sql::CaptureInfo captureInfo(const std::vector<std::string>& files)
{
    model::sql::CaptureInfo c;
    for (const auto& f : files) {
        c.file += (c.file.empty() ? "" : "; ") + f;
        struct stat sb { };
        if (::stat(f.c_str(), &sb) == 0)
            c.bytes += uint64_t(sb.st_size);
    }
    return c;
}

} // namespace gapscope::cli
#endif
