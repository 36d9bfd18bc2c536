// SPDX-License-Identifier: MIT
#include "model/export/htmlreport.h"

#include "model/analysis/findings.h"
#include "model/base/markup.h"
#include "model/trace/kernelname.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <sstream>

namespace gapscope::model {

namespace {

// Colours: what a bar is (the same for every report, so that reports side by side read alike).
constexpr const char* kBudget = "#4e79a7";
constexpr const char* kGap = "#e15759";
constexpr const char* kLess = "#59a14f"; // a bar below its budget, a change for the better
constexpr const char* kMeasured = "#9c755f";
constexpr const char* kWait = "#f28e2b";

std::string esc(std::string_view s)
{
    return markupEscaped(s);
}

std::string num(double v, int decimals = 3)
{
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
    return buf;
}

const char* verdictColour(const std::string& v)
{
    if (v == "ok" || v == "no change" || v == "pass" || v == "improvement")
        return "#2e7d32";
    if (v == "warn" || v == "inconclusive")
        return "#b26a00";
    return "#c62828"; // bad, regression, not compared
}

std::string page(const std::string& title, const std::string& body)
{
    std::ostringstream h;
    h << "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>" << esc(title)
      << "</title>\n<style>\n"
         "body{font-family:sans-serif;margin:24px;color:#222;max-width:1100px}\n"
         "h1{font-size:22px}h2{font-size:17px;margin-top:28px;border-bottom:1px solid #ccc}\n"
         "table{border-collapse:collapse;font-size:13px;margin:6px 0}\n"
         "td,th{border:1px solid #ddd;padding:3px 7px;text-align:left;vertical-align:top}\n"
         "td.n{text-align:right;font-variant-numeric:tabular-nums}\n"
         ".verdict{font-weight:bold;padding:2px 6px;border-radius:3px;color:#fff}\n"
         ".muted{color:#666;font-size:12px}code{font-size:12px}\n"
         "</style>\n</head>\n<body>\n<h1>"
      << esc(title) << "</h1>\n"
      << body
      << "<p class=\"muted\">Written by gapscope. Times are per step unless said otherwise.</p>\n</body>\n</html>\n";
    return h.str();
}

// A verdict as a coloured label: `text`, in the colour of verdict `v` (the text itself unless given).
std::string badge(const std::string& v, const std::string& text = {})
{
    return std::string("<span class=\"verdict\" style=\"background:") + verdictColour(v) + "\">"
        + esc(text.empty() ? v : text) + "</span>";
}

std::string coverageTable(const json::Value& coverage)
{
    std::ostringstream h;
    h << "<table><tr><th>coverage</th><th>value</th><th>verdict</th><th>what it means for the answer</th></tr>\n";
    for (const auto& c : coverage.items())
        h << "<tr><td>" << esc(c["name"].toString()) << "</td><td class=\"n\">"
          << num(c["value"].toDouble(), c["unit"].toString() == "%" || c["unit"].toString() == "us" ? 1 : 0) << " "
          << esc(c["unit"].toString()) << "</td><td>" << badge(c["verdict"].toString()) << "</td><td>"
          << esc(c["meaning"].toString()) << "</td></tr>\n";
    h << "</table>\n";
    return h.str();
}

// A waterfall: each bar from the running total to the running total plus its value (ms), in order;
// budget bars, then gap bars (positive: above the budget; negative: below), then the measured step.
std::string waterfallSvg(const json::Value& bars, double measuredMs)
{
    struct Row {
        std::string name, kind;
        double ms;
    };
    std::vector<Row> rows;
    for (const auto& b : bars.items())
        rows.push_back({ b["name"].toString(), b["kind"].toString(), b["ms"].toDouble() });
    rows.push_back({ "measured step", "measured", measuredMs });
    double running = 0, top = measuredMs, bottom = 0;
    for (const Row& r : rows) {
        if (r.kind == "measured")
            continue;
        running += r.ms;
        top = std::max(top, running);
        bottom = std::min(bottom, running);
    }
    const int label = 230, plot = 620, value = 90, rowH = 20;
    const int width = label + plot + value, height = int(rows.size()) * rowH + 24;
    const double span = std::max(1e-9, top - bottom);
    auto x = [&](double ms) { return label + (ms - bottom) / span * plot; };
    std::ostringstream s;
    s << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << width << "\" height=\"" << height
      << "\" font-family=\"sans-serif\" font-size=\"12\">\n";
    running = 0;
    int y = 4;
    for (const Row& r : rows) {
        double a = running, b = running + r.ms;
        const char* colour = kBudget;
        if (r.kind == "measured") {
            a = 0;
            b = r.ms;
            colour = kMeasured;
        } else if (r.kind == "gap") {
            colour = r.ms >= 0 ? kGap : kLess;
        }
        if (r.kind != "measured")
            running = b;
        const double x0 = x(std::min(a, b)), x1 = x(std::max(a, b));
        s << "<text x=\"" << label - 6 << "\" y=\"" << y + 14 << "\" text-anchor=\"end\">" << esc(r.name) << "</text>";
        s << "<rect x=\"" << num(x0, 1) << "\" y=\"" << y + 2 << "\" width=\"" << num(std::max(1.0, x1 - x0), 1)
          << "\" height=\"" << rowH - 5 << "\" fill=\"" << colour << "\"/>";
        s << "<text x=\"" << label + plot + 6 << "\" y=\"" << y + 14 << "\">"
          << (r.kind == "gap" && r.ms > 0 ? "+" : "") << num(r.ms, 3) << "</text>\n";
        y += rowH;
    }
    s << "<text x=\"" << label << "\" y=\"" << height - 4 << "\" fill=\"#666\">0</text><text x=\"" << label + plot
      << "\" y=\"" << height - 4 << "\" text-anchor=\"end\" fill=\"#666\">" << num(top, 3) << " ms</text>\n</svg>\n";
    return s.str();
}

// One bar per rank: its median step, the collective wait in it drawn over its start.
std::string ranksSvg(const json::Value& ranks)
{
    struct Row {
        uint32_t rank;
        double step, wait;
    };
    std::vector<Row> rows;
    double top = 0;
    for (const auto& r : ranks.items()) {
        const json::Value& m = r["median"];
        if (!m.isObject())
            continue;
        double wait = 0;
        for (const auto& b : m["bars"].items())
            if (b["name"].toString() == "collective wait")
                wait = b["ms"].toDouble();
        rows.push_back({ uint32_t(r["rank"].toInt()), m["measured_ms"].toDouble(), wait });
        top = std::max(top, m["measured_ms"].toDouble());
    }
    const int label = 80, plot = 600, rowH = 18;
    const int height = int(rows.size()) * rowH + 8;
    std::ostringstream s;
    s << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << label + plot + 220 << "\" height=\"" << height
      << "\" font-family=\"sans-serif\" font-size=\"12\">\n";
    int y = 4;
    for (const Row& r : rows) {
        const double w = top > 0 ? r.step / top * plot : 0, ww = top > 0 ? r.wait / top * plot : 0;
        s << "<text x=\"" << label - 6 << "\" y=\"" << y + 12 << "\" text-anchor=\"end\">rank " << r.rank << "</text>";
        s << "<rect x=\"" << label << "\" y=\"" << y + 1 << "\" width=\"" << num(std::max(1.0, w), 1) << "\" height=\""
          << rowH - 4 << "\" fill=\"" << kMeasured << "\"/>";
        if (ww > 0)
            s << "<rect x=\"" << label << "\" y=\"" << y + 1 << "\" width=\"" << num(std::max(1.0, ww), 1)
              << "\" height=\"" << rowH - 4 << "\" fill=\"" << kWait << "\"/>";
        s << "<text x=\"" << label + int(w) + 6 << "\" y=\"" << y + 12 << "\">" << num(r.step, 3) << " ms (wait "
          << num(r.wait, 3) << ")</text>\n";
        y += rowH;
    }
    s << "</svg>\n";
    return s.str();
}

// A's and B's bars side by side (ms per step), one pair per bar.
std::string pairedBarsSvg(const json::Value& bars)
{
    double top = 0;
    for (const auto& b : bars.items())
        top = std::max({ top, b["a_ms"].toDouble(), b["b_ms"].toDouble() });
    const int label = 230, plot = 600, rowH = 26;
    const int height = int(bars.size()) * rowH + 8;
    std::ostringstream s;
    s << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << label + plot + 160 << "\" height=\"" << height
      << "\" font-family=\"sans-serif\" font-size=\"12\">\n";
    int y = 4;
    for (const auto& b : bars.items()) {
        const double a = b["a_ms"].toDouble(), bb = b["b_ms"].toDouble();
        const double wa = top > 0 ? std::abs(a) / top * plot : 0, wb = top > 0 ? std::abs(bb) / top * plot : 0;
        s << "<text x=\"" << label - 6 << "\" y=\"" << y + 15 << "\" text-anchor=\"end\">" << esc(b["name"].toString())
          << "</text>";
        s << "<rect x=\"" << label << "\" y=\"" << y + 1 << "\" width=\"" << num(std::max(1.0, wa), 1)
          << "\" height=\"10\" fill=\"" << kBudget << "\"/>";
        s << "<rect x=\"" << label << "\" y=\"" << y + 12 << "\" width=\"" << num(std::max(1.0, wb), 1)
          << "\" height=\"10\" fill=\"" << (bb > a ? kGap : kLess) << "\"/>";
        s << "<text x=\"" << label + plot + 6 << "\" y=\"" << y + 15 << "\">" << num(a, 3) << " → " << num(bb, 3)
          << "</text>\n";
        y += rowH;
    }
    s << "</svg>\n";
    return s.str();
}

} // namespace

std::string htmlReport(const AnalysisReport& report, const HtmlReportInput& in)
{
    const json::Value doc = report.toJson();
    std::ostringstream b;
    b << "<p>";
    for (const auto& f : in.files)
        b << "<code>" << esc(f) << "</code> ";
    b << "<br>budget: " << esc(doc["budget"]["present"].toBool() ? doc["budget"]["description"].toString() : "none")
      << "</p>\n";

    b << "<h2>Coverage</h2>\n" << coverageTable(doc["coverage"]);

    const int critical = int(doc["critical"]["rank"].toInt(-1));
    for (const auto& r : doc["ranks"].items()) {
        if (int(r["rank"].toInt()) != critical && critical >= 0)
            continue;
        const json::Value& m = r["median"];
        if (!m.isObject())
            continue;
        b << "<h2>Waterfall: the median step of rank " << r["rank"].toInt() << " (the critical rank), step "
          << m["index"].toInt() << "</h2>\n<p class=\"muted\">From the budget (blue) through each gap (red: above "
          << "budget; green: below) to the measured step (brown), ms.</p>\n"
          << waterfallSvg(m["bars"], m["measured_ms"].toDouble());
        break;
    }

    b << "<h2>Ranks</h2>\n<p class=\"muted\">Each rank's median step (brown) and the collective wait in it "
         "(orange).</p>\n"
      << ranksSvg(doc["ranks"]);

    b << "<h2>Findings</h2>\n<table><tr><th>finding</th><th>bar</th><th>rank</th><th>step</th><th>ms</th></tr>\n";
    for (const Finding& f : report.findings())
        b << "<tr><td>" << esc(f.text) << "</td><td>" << esc(f.barName) << "</td><td class=\"n\">"
          << (f.rank >= 0 ? std::to_string(f.rank) : "") << "</td><td class=\"n\">"
          << (f.step >= 0 ? std::to_string(f.step) : "") << "</td><td class=\"n\">" << num(f.ms, 3) << "</td></tr>\n";
    b << "</table>\n";

    // Steps by kind: how many, and their median window.
    std::map<std::string, std::vector<TimeNs>> byKind;
    for (const StepRow& s : in.steps)
        byKind[toString(s.kind)].push_back(s.window);
    b << "<h2>Steps by kind</h2>\n<table><tr><th>kind</th><th>steps (all ranks)</th><th>median window ms</th></tr>\n";
    for (auto& [kind, w] : byKind) {
        std::nth_element(w.begin(), w.begin() + long(w.size() / 2), w.end());
        b << "<tr><td>" << esc(kind) << "</td><td class=\"n\">" << w.size() << "</td><td class=\"n\">"
          << num(double(w[w.size() / 2]) / 1e6, 3) << "</td></tr>\n";
    }
    b << "</table>\n";

    b << "<h2>Kernels by own time</h2>\n<table><tr><th>kernel</th><th>count</th><th>own total ms</th><th>total "
         "ms</th><th>median us</th></tr>\n";
    for (size_t i = 0; i < in.kernels.size() && i < in.topKernels; ++i) {
        const KernelRow& k = in.kernels[i];
        const std::string full(in.name ? in.name(k.name) : std::string_view());
        b << "<tr><td title=\"" << esc(full) << "\"><code>" << esc(shortKernelName(full))
          << "</code></td><td class=\"n\">" << k.count << "</td><td class=\"n\">" << num(double(k.ownTotal) / 1e6, 3)
          << "</td><td class=\"n\">" << num(double(k.total) / 1e6, 3) << "</td><td class=\"n\">"
          << num(double(k.median) / 1e3, 1) << "</td></tr>\n";
    }
    b << "</table>\n";

    b << "<h2>Host events in the launch/host gaps</h2>\n";
    bool any = false;
    for (const auto& h : doc["host_gaps"].items()) {
        if (h["top"].size() == 0)
            continue;
        any = true;
        b << "<p>rank " << h["rank"].toInt() << ": " << num(h["gap_ms"].toDouble(), 3) << " ms of gaps, "
          << num(h["explained_ms"].toDouble(), 3) << " ms inside host events</p>\n<table><tr><th>host "
          << "event</th><th>kind</th><th>ms</th><th>count</th></tr>\n";
        size_t n = 0;
        for (const auto& t : h["top"].items()) {
            if (n++ == 10)
                break;
            b << "<tr><td><code>" << esc(t["name"].toString()) << "</code></td><td>" << esc(t["kind"].toString())
              << "</td><td class=\"n\">" << num(t["ms"].toDouble(), 3) << "</td><td class=\"n\">" << t["count"].toInt()
              << "</td></tr>\n";
        }
        b << "</table>\n";
    }
    if (!any)
        b << "<p class=\"muted\">No launch/host gap lies inside a recorded host event.</p>\n";
    return page(in.title, b.str());
}

std::string htmlDiffReport(const DiffReport& diff, const std::string& title)
{
    const json::Value doc = diff.toJson();
    std::ostringstream b;
    b << "<p>A: <code>" << esc(doc["a"]["label"].toString()) << "</code><br>B: <code>"
      << esc(doc["b"]["label"].toString()) << "</code><br>steps compared: " << doc["steps"]["first"].toInt() << " to "
      << doc["steps"]["last"].toInt() << " (" << doc["steps"]["common"].toInt() << " in common)</p>\n";
    const json::Value& gate = doc["gate"];
    if (gate.isObject()) {
        b << "<h2>Verdict: " << badge(gate["result"].toString()) << "</h2>\n<p>threshold "
          << esc(gate["threshold"].toString()) << ", " << num(gate["confidence"].toDouble() * 100, 0)
          << "% intervals by bootstrap over the steps (" << gate["resamples"].toInt() << " resamples)</p>\n";
        for (const auto& n : gate["notes"].items())
            b << "<p class=\"muted\">" << esc(n.toString()) << "</p>\n";
        std::vector<std::string> waived;
        for (const auto& w : gate["waived"].items())
            waived.push_back(w.toString());
        b << "<table><tr><th>bar</th><th>A median ms</th><th>B median ms</th><th>change ms</th><th>interval "
             "ms</th><th>threshold ms</th><th>verdict</th></tr>\n";
        for (const auto& v : doc["verdicts"].items()) {
            if (v["kind"].toString() != "bar")
                continue;
            const bool interval = v["ci_low_ms"].isNumber();
            b << "<tr><td>" << esc(v["name"].toString()) << "</td><td class=\"n\">"
              << num(v["a_median_ms"].toDouble(), 4) << "</td><td class=\"n\">" << num(v["b_median_ms"].toDouble(), 4)
              << "</td><td class=\"n\">" << num(v["delta_ms"].toDouble(), 4) << "</td><td class=\"n\">"
              << (interval ? num(v["ci_low_ms"].toDouble(), 4) + " .. " + num(v["ci_high_ms"].toDouble(), 4) : "-")
              << "</td><td class=\"n\">" << num(v["threshold_ms"].toDouble(), 4) << "</td><td>"
              << (std::find(waived.begin(), waived.end(), v["name"].toString()) != waived.end()
                         ? badge("inconclusive", "regression, waived: the step got faster")
                         : badge(v["verdict"].toString()))
              << "</td></tr>\n";
        }
        b << "</table>\n";
        bool kernels = false;
        for (const auto& v : doc["verdicts"].items()) {
            const std::string verdict = v["verdict"].toString();
            if (v["kind"].toString() != "kernel" || (verdict != "regression" && verdict != "improvement"))
                continue;
            if (!kernels)
                b << "<h2>Kernels that moved</h2>\n<table><tr><th>kernel</th><th>A median ms</th><th>B median "
                     "ms</th><th>change ms</th><th>verdict</th></tr>\n";
            kernels = true;
            b << "<tr><td title=\"" << esc(v["name"].toString()) << "\"><code>"
              << esc(shortKernelName(v["name"].toString())) << "</code></td><td class=\"n\">"
              << num(v["a_median_ms"].toDouble(), 4) << "</td><td class=\"n\">" << num(v["b_median_ms"].toDouble(), 4)
              << "</td><td class=\"n\">" << num(v["delta_ms"].toDouble(), 4) << "</td><td>" << badge(verdict)
              << "</td></tr>\n";
        }
        if (kernels)
            b << "</table>\n";
    }
    b << "<h2>The median step, A (blue) and B (red: more, green: less)</h2>\n" << pairedBarsSvg(doc["bars"]);
    b << "<h2>Coverage of A</h2>\n" << coverageTable(doc["coverage"]["a"]);
    b << "<h2>Coverage of B</h2>\n" << coverageTable(doc["coverage"]["b"]);
    if (doc["problems"].size()) {
        b << "<h2>Not compared</h2>\n<ul>";
        for (const auto& p : doc["problems"].items())
            b << "<li>" << esc(p.toString()) << "</li>";
        b << "</ul>\n";
    }
    return page(title, b.str());
}

} // namespace gapscope::model
