#include "workbook/profiler/multi_rank.h"

#include <fmt/format.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <stdexcept>

#include "workbook/profiler/format.h"

namespace workbook {
namespace {

// The median; for an even count, the mean of the two middle values.
std::int64_t median(std::vector<std::int64_t> values) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  const std::size_t n = values.size();
  return n % 2 ? values[n / 2] : values[n / 2 - 1] + (values[n / 2] - values[n / 2 - 1]) / 2;
}

bool is_outermost_collective_call(const Profile& profile, EventId id) {
  if (!profile[id].on_host() || !is_collective_call(profile[id].name)) return false;
  for (auto at = profile.parent(id); at; at = profile.parent(*at))
    if (is_collective_call(profile[*at].name)) return false;
  return true;
}

// Where a rank's clock is anchored: the end of its first transfer to finish.
std::int64_t first_transfer_end(const Profile& profile, const std::string& name) {
  std::optional<std::int64_t> end;
  for (const EventView e : profile.events())
    if (is_communication(e) && (!end || e.end_ns < *end)) end = e.end_ns;
  if (!end) throw std::invalid_argument(name + ": no collective transfer (gloo:, nccl: or an NCCL kernel) to align by");
  return *end;
}

RankSummary summarise(const Profile& profile, const std::string& name) {
  const auto steps = step_communication(profile);
  if (steps.empty()) throw std::invalid_argument(name + ": no ProfilerStep#N regions");
  RankSummary r;
  r.name = name;
  r.steps = steps.size();
  std::vector<std::int64_t> step, communication, overlapped, exposed;
  std::int64_t all_communication = 0, all_overlapped = 0;
  for (const auto& s : steps) {
    step.push_back(s.step_ns);
    communication.push_back(s.communication_ns);
    overlapped.push_back(s.overlapped_ns);
    exposed.push_back(s.exposed_ns());
    all_communication += s.communication_ns;
    all_overlapped += s.overlapped_ns;
  }
  r.step_ns = median(step);
  r.communication_ns = median(communication);
  r.overlapped_ns = median(overlapped);
  r.exposed_ns = median(exposed);
  r.overlap_fraction = all_communication > 0 ? double(all_overlapped) / double(all_communication) : 0;
  return r;
}

}  // namespace

std::vector<std::int64_t> collective_arrivals(const Profile& profile) {
  std::vector<std::int64_t> calls, transfers;
  for (EventId id = 0; id < profile.size(); ++id) {
    if (is_outermost_collective_call(profile, id)) calls.push_back(profile[id].start_ns);
    if (is_communication(profile[id])) transfers.push_back(profile[id].start_ns);
  }
  auto& arrivals = calls.empty() ? transfers : calls;
  std::sort(arrivals.begin(), arrivals.end());
  return arrivals;
}

MultiRankAnalysis analyze_ranks(const std::vector<Profile>& ranks, const std::vector<std::string>& names) {
  if (ranks.size() < 2) throw std::invalid_argument("a job needs at least two ranks' traces");
  MultiRankAnalysis a;
  std::vector<std::int64_t> anchors;
  std::vector<std::vector<std::int64_t>> arrivals;
  std::size_t compared = SIZE_MAX;
  for (std::size_t r = 0; r < ranks.size(); ++r) {
    const std::string name = r < names.size() ? names[r] : fmt::format("rank {}", r);
    a.ranks.push_back(summarise(ranks[r], name));
    anchors.push_back(first_transfer_end(ranks[r], name));
    arrivals.push_back(collective_arrivals(ranks[r]));
    compared = std::min(compared, arrivals.back().size());
  }
  const std::int64_t latest = *std::max_element(anchors.begin(), anchors.end());
  for (std::int64_t anchor : anchors) a.shift_ns.push_back(latest - anchor);
  for (std::size_t k = 0; k < compared; ++k) {
    CollectiveArrival c;
    for (std::size_t r = 0; r < ranks.size(); ++r) c.arrival_ns.push_back(arrivals[r][k] + a.shift_ns[r]);
    const auto last = std::max_element(c.arrival_ns.begin(), c.arrival_ns.end());
    c.last_rank = std::size_t(last - c.arrival_ns.begin());
    c.spread_ns = *last - *std::min_element(c.arrival_ns.begin(), c.arrival_ns.end());
    for (std::size_t r = 0; r < ranks.size(); ++r) a.ranks[r].waited_ns += *last - c.arrival_ns[r];
    ++a.ranks[c.last_rank].arrived_last;
    a.collectives.push_back(std::move(c));
  }
  for (auto& r : a.ranks) r.collectives = compared;
  // The straggler: last more often than every other rank (a tie names none).
  std::size_t most = 0;
  for (std::size_t r = 1; r < a.ranks.size(); ++r)
    if (a.ranks[r].arrived_last > a.ranks[most].arrived_last) most = r;
  const bool tied = std::any_of(a.ranks.begin(), a.ranks.end(), [&](const RankSummary& other) {
    return &other != &a.ranks[most] && other.arrived_last == a.ranks[most].arrived_last;
  });
  if (compared > 0 && !tied) a.straggler = most;
  return a;
}

std::string format_multi_rank(const MultiRankAnalysis& a) {
  std::string out = fmt::format("{:<28} {:>5} {:>11} {:>11} {:>11} {:>11} {:>8} {:>11} {:>9}\n", "rank", "steps",
                                "step", "comm", "exposed", "overlapped", "overlap", "waited", "last at");
  for (const auto& r : a.ranks)
    out +=
        fmt::format("{:<28} {:>5} {:>11} {:>11} {:>11} {:>11} {:>7.0f}% {:>11} {:>4} of {}\n", shortened(r.name, 28),
                    r.steps, format_time_us(double(r.step_ns) / 1e3), format_time_us(double(r.communication_ns) / 1e3),
                    format_time_us(double(r.exposed_ns) / 1e3), format_time_us(double(r.overlapped_ns) / 1e3),
                    100 * r.overlap_fraction, format_time_us(double(r.waited_ns) / 1e3), r.arrived_last, r.collectives);
  out +=
      "step, comm, exposed, overlapped: medians per recorded step, each on its own (they need not add up); waited: "
      "summed over the collectives compared, from the rank's arrival to the last rank's, on clocks aligned by the "
      "first "
      "transfer's end (good to a message's latency)\n";
  if (a.straggler)
    out += fmt::format("{} collectives compared; the last to arrive most often: {} ({} of {})\n", a.collectives.size(),
                       a.ranks[*a.straggler].name, a.ranks[*a.straggler].arrived_last, a.collectives.size());
  else if (!a.collectives.empty())
    out += fmt::format("{} collectives compared; no single straggler: ranks tie for arriving last most often\n",
                       a.collectives.size());
  else
    out += "no collective calls to compare\n";
  return out;
}

std::string multi_rank_json(const MultiRankAnalysis& a) {
  nlohmann::json out = {{"ranks", nlohmann::json::array()}, {"collectives", nlohmann::json::array()}};
  for (std::size_t r = 0; r < a.ranks.size(); ++r) {
    const auto& s = a.ranks[r];
    out["ranks"].push_back({{"name", s.name},
                            {"steps", s.steps},
                            {"step_us", double(s.step_ns) / 1e3},
                            {"communication_us", double(s.communication_ns) / 1e3},
                            {"overlapped_us", double(s.overlapped_ns) / 1e3},
                            {"exposed_us", double(s.exposed_ns) / 1e3},
                            {"overlap_fraction", s.overlap_fraction},
                            {"collectives", s.collectives},
                            {"waited_us", double(s.waited_ns) / 1e3},
                            {"arrived_last", s.arrived_last},
                            {"clock_shift_us", double(a.shift_ns[r]) / 1e3}});
  }
  for (const auto& c : a.collectives) {
    nlohmann::json arrivals = nlohmann::json::array();
    for (auto t : c.arrival_ns) arrivals.push_back(double(t) / 1e3);
    out["collectives"].push_back(
        {{"arrival_us", arrivals}, {"last_rank", c.last_rank}, {"spread_us", double(c.spread_ns) / 1e3}});
  }
  out["straggler"] = a.straggler ? nlohmann::json(*a.straggler) : nlohmann::json(nullptr);
  return out.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

}  // namespace workbook
