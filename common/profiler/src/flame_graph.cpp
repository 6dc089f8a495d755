#include "workbook/profiler/flame_graph.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <memory>

#include "saturating.h"
#include "workbook/profiler/atomic_file.h"
#include "workbook/profiler/format.h"
#include "workbook/profiler/svg.h"

namespace workbook {
namespace {

std::string frame_name(std::string_view name) {
  // Every step is one frame, as every step is one row of the table: ProfilerStep*.
  std::string out = name.rfind("ProfilerStep#", 0) == 0 ? std::string("ProfilerStep*") : std::string(name);
  for (char& c : out)
    if (c == ' ' || c == ';' || c == '\t' || c == '\n') c = '_';
  return out;
}

std::string joined(const std::vector<std::string>& frames) {
  std::string out;
  for (std::size_t i = 0; i < frames.size(); ++i) out += (i ? ";" : "") + frames[i];
  return out;
}

// The stacks as a tree of frames, each node holding the value of everything beneath it.
struct Node {
  std::int64_t value = 0;
  std::map<std::string, std::unique_ptr<Node>> children;
};

}  // namespace

std::vector<CollapsedStack> collapsed_stacks(const Profile& p) {
  std::map<std::string, CollapsedStack> by_text;
  std::vector<std::string> frames;
  for (EventId id = 0; id < p.size(); ++id) {
    if (!p[id].on_host()) continue;
    const std::int64_t self_us = p.self_ns(id) / 1000;
    if (self_us < 1) continue;
    frames.clear();
    for (std::optional<EventId> at = id; at; at = p.parent(*at)) frames.push_back(frame_name(p[*at].name));
    std::reverse(frames.begin(), frames.end());
    CollapsedStack& s = by_text[joined(frames)];
    s.frames = frames;
    s.value = detail::sat_add(s.value, self_us);
  }
  std::vector<CollapsedStack> out;
  for (auto& [text, stack] : by_text) out.push_back(std::move(stack));
  return out;
}

std::string collapsed_stacks_text(const Profile& profile) {
  std::string out;
  for (const auto& s : collapsed_stacks(profile)) out += fmt::format("{} {}\n", joined(s.frames), s.value);
  return out;
}

void write_collapsed_stacks(const Profile& profile, const std::filesystem::path& path) {
  write_file_atomically(path, collapsed_stacks_text(profile));
}

std::string flame_graph_svg(const Profile& profile, const std::string& title, int width) {
  Node root;
  int depth = 0;
  for (const auto& s : collapsed_stacks(profile)) {
    Node* at = &root;
    root.value = detail::sat_add(root.value, s.value);
    for (const auto& f : s.frames) {
      auto& child = at->children[f];
      if (!child) child = std::make_unique<Node>();
      child->value = detail::sat_add(child->value, s.value);
      at = child.get();
    }
    depth = std::max(depth, int(s.frames.size()));
  }
  const int row = 18, top = 40, margin = 10;
  const int height = top + row * std::max(depth, 1) + margin;
  std::string svg = fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{0}\" height=\"{1}\" viewBox=\"0 0 {0} {1}\" "
      "font-family=\"sans-serif\" "
      "font-size=\"11\">\n<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n<text x=\"{2}\" y=\"22\" "
      "font-size=\"14\" "
      "font-weight=\"bold\">{3}</text>\n",
      width, height, margin, svg_escape(title));
  if (root.value == 0) return svg + "<text x=\"10\" y=\"40\">no self time to show</text>\n</svg>\n";
  const double scale = double(width - 2 * margin) / double(root.value);
  // Depth-first, children left to right by name (flamegraph.pl's order); row 0 at the bottom.
  struct Item {
    const Node* node;
    std::string name;
    double x;
    int level;
  };
  std::vector<Item> stack;
  double x = margin;
  for (const auto& [name, child] : root.children) {
    stack.push_back({child.get(), name, x, 0});
    x += double(child->value) * scale;
  }
  std::reverse(stack.begin(), stack.end());
  while (!stack.empty()) {
    const Item item = stack.back();
    stack.pop_back();
    const double w = double(item.node->value) * scale;
    const int y = height - margin - (item.level + 1) * row;
    const int hue = int(std::hash<std::string>{}(item.name) % 40);
    svg += fmt::format(
        "<g><title>{} · {} · {:.1f}%</title><rect x=\"{:.1f}\" y=\"{}\" width=\"{:.1f}\" height=\"{}\" "
        "fill=\"hsl({}, 80%, 60%)\" stroke=\"white\" stroke-width=\"0.5\"/>",
        svg_escape(item.name), format_time_us(double(item.node->value)),
        100.0 * double(item.node->value) / double(root.value), item.x, y, std::max(w, 0.5), row - 1, 10 + hue);
    if (w > 6.5 * double(item.name.size()) + 4)
      svg += fmt::format("<text x=\"{:.1f}\" y=\"{}\">{}</text>", item.x + 2, y + 12, svg_escape(item.name));
    svg += "</g>\n";
    double cx = item.x;
    std::vector<Item> children;
    for (const auto& [name, child] : item.node->children) {
      children.push_back({child.get(), name, cx, item.level + 1});
      cx += double(child->value) * scale;
    }
    stack.insert(stack.end(), children.rbegin(), children.rend());
  }
  return svg + "</svg>\n";
}

}  // namespace workbook
