// SPDX-License-Identifier: MIT
// inject_probe: drives libgapscope-inject.so in real processes without gapscope-agent, for the GPU
// checks in tests/gpu/capture_inject.sh. It listens on the rank socket and takes capture requests
// as files in a control folder, so the workload itself decides when to capture:
//
//   inject_probe --socket PATH --control DIR [--timeout SECONDS]
//
//   DIR/NAME.req   "key=value" lines: ranks=2 steps=20 rule=graph pattern=... duration_s=0
//                  nvtx=1 nccl=1 api=1 sync=1 memops=1 lead_ms=100 flush_ms=20 timeout_s=60
//                  (api/sync/memops/nvtx/nccl=0 leave that record kind off: the cost of each kind)
//   DIR/NAME.recording   written once every rank reported a boundary inside the window
//   DIR/NAME.json        results (ProbeAgent::json), then DIR/NAME.done
//   DIR/quit             ends the probe
#include "probeagent.h"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <dirent.h>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <sys/stat.h>

using namespace gapscope;
using namespace gapscope::capture;

namespace {

bool exists(const std::string& p)
{
    struct stat st { };
    return ::stat(p.c_str(), &st) == 0;
}

void writeFile(const std::string& path, const std::string& text)
{
    const std::string tmp = path + ".tmp";
    std::ofstream(tmp) << text;
    std::rename(tmp.c_str(), path.c_str());
}

std::map<std::string, std::string> readRequest(const std::string& path)
{
    std::map<std::string, std::string> kv;
    std::ifstream in(path);
    std::string word;
    while (in >> word) {
        const auto eq = word.find('=');
        if (eq != std::string::npos)
            kv[word.substr(0, eq)] = word.substr(eq + 1);
    }
    return kv;
}

std::string nextRequest(const std::string& dir)
{
    DIR* d = opendir(dir.c_str());
    if (!d)
        return {};
    std::string found;
    while (dirent* e = readdir(d)) {
        std::string n = e->d_name;
        if (n.size() > 4 && n.compare(n.size() - 4, 4, ".req") == 0) {
            found = n.substr(0, n.size() - 4);
            break;
        }
    }
    closedir(d);
    return found;
}

double nowS()
{
    using namespace std::chrono;
    return duration<double>(steady_clock::now().time_since_epoch()).count();
}

void runRequest(probe::ProbeAgent& agent, const std::string& dir, const std::string& name, uint64_t id)
{
    const std::string base = dir + "/" + name;
    auto kv = readRequest(base + ".req");
    std::rename((base + ".req").c_str(), (base + ".taken").c_str());
    auto num = [&](const char* k, double def) { return kv.count(k) ? std::atof(kv[k].c_str()) : def; };
    const size_t ranks = size_t(num("ranks", 1));
    const double timeout = num("timeout_s", 120);
    const double t0 = nowS();
    while (agent.rankCount() < ranks && nowS() - t0 < timeout)
        agent.pump(10);
    for (int i = 0; i < 20; ++i) // notice connections that closed meanwhile
        agent.pump(10);
    pb::CaptureSettings s;
    s.set_steps(uint32_t(num("steps", 20)));
    s.set_duration_s(num("duration_s", 0));
    s.set_step_rule(kv.count("rule") ? kv["rule"] : "graph");
    s.set_step_pattern(kv.count("pattern") ? kv["pattern"] : "");
    s.set_kernels(true);
    s.set_memory_ops(num("memops", 1) != 0);
    s.set_runtime_api(num("api", 1) != 0);
    s.set_synchronization(num("sync", 1) != 0);
    s.set_nvtx(num("nvtx", 1) != 0);
    s.set_nccl(num("nccl", 1) != 0);
    const double armAt = nowS();
    agent.arm(id, s, uint32_t(num("flush_ms", 20)), ranks);
    bool recordingAnnounced = false;
    double plannedAt = 0;
    while (nowS() - t0 < timeout) {
        agent.pump(5);
        if (agent.allArmed() && agent.tryPlan(int64_t(num("lead_ms", 100) * 1e6)) && plannedAt == 0)
            plannedAt = nowS();
        if (!recordingAnnounced) {
            bool all = agent.allArmed();
            for (auto* r : agent.ranks())
                all = all && (r->recordingBoundaries > 0 || (s.steps() == 0 && r->plan == agent.plan()));
            if (all && agent.plan() > 0) {
                writeFile(base + ".recording", "plan=" + std::to_string(agent.plan()) + "\n");
                recordingAnnounced = true;
            }
        }
        if (agent.plan() > 0 && agent.allDone())
            break;
        if (agent.noneArmedOk())
            break; // e.g. another CUPTI client: the answers say why
    }
    agent.finishStats();
    std::string json = agent.json();
    // Timing of the request itself, for the arm latency as the probe sees it.
    std::ostringstream extra;
    extra << ",\n \"probe\": {\"arm_to_plan_s\": " << (plannedAt ? plannedAt - armAt : -1)
          << ", \"total_s\": " << nowS() - t0 << ", \"plan\": " << agent.plan() << "}\n}";
    json = json.substr(0, json.rfind('}')) + extra.str();
    writeFile(base + ".json", json);
    agent.disarm();
    const double d0 = nowS();
    while (nowS() - d0 < 2) {
        agent.pump(10);
        bool all = true;
        for (auto* r : agent.ranks())
            all = all && (r->disarmed || !r->open);
        if (all)
            break;
    }
    writeFile(base + ".done", "ok\n");
}

} // namespace

int main(int argc, char** argv)
{
    std::string socket, control;
    double timeout = 600;
    for (int i = 1; i + 1 < argc; i += 2) {
        const std::string a = argv[i];
        if (a == "--socket")
            socket = argv[i + 1];
        else if (a == "--control")
            control = argv[i + 1];
        else if (a == "--timeout")
            timeout = std::atof(argv[i + 1]);
    }
    if (socket.empty() || control.empty()) {
        std::fprintf(stderr, "usage: inject_probe --socket PATH --control DIR [--timeout SECONDS]\n");
        return 2;
    }
    probe::ProbeAgent agent;
    if (Status s = agent.listen(socket); !s) {
        std::fprintf(stderr, "inject_probe: %s\n", s.message().c_str());
        return 1;
    }
    const double t0 = nowS();
    uint64_t id = 1;
    while (!exists(control + "/quit") && nowS() - t0 < timeout) {
        agent.pump(20);
        const std::string name = nextRequest(control);
        if (!name.empty())
            runRequest(agent, control, name, id++);
    }
    return 0;
}
