// SPDX-License-Identifier: MIT
#include "views/compare/comparison.h"

using namespace gapscope::model;

std::shared_ptr<const Comparison> Comparison::make(std::shared_ptr<const TraceDocument> a,
    std::shared_ptr<const TraceDocument> b, const KernelClassifier& classifier, const StepBudget& budget)
{
    auto c = std::make_shared<Comparison>();
    c->a = std::move(a);
    c->b = std::move(b);
    c->analyzerA = std::make_unique<GapAnalyzer>(*c->a->trace, classifier, budget);
    c->analyzerB = std::make_unique<GapAnalyzer>(*c->b->trace, classifier, budget);
    c->diff = std::make_unique<TraceDiff>(*c->analyzerA, *c->analyzerB);
    return c;
}
