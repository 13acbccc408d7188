// Internals of the dataset layouts (layouts.cpp, bop.cpp, tum.cpp): the per-layout resolvers and
// small helpers they share.
#pragma once

#include <filesystem>
#include <string>

#include "depthmask/layouts.h"

namespace depthmask::layouts_detail {

// Each fills r.listing (and r.config's layout defaults); r.config.input.root is the folder and
// r.layout / r.reason are already set. Throw InputError / ConfigError as resolve_input documents.
void resolve_bop(ResolvedInput& r);
void resolve_tum(ResolvedInput& r);

inline bool starts_with(const std::string& s, const std::string& p) { return s.compare(0, p.size(), p) == 0; }
inline bool ends_with(const std::string& s, const std::string& p) {
  return s.size() >= p.size() && s.compare(s.size() - p.size(), p.size(), p) == 0;
}

// Counts a file that belongs to no frame, keeping the first few for the log.
inline void add_unmatched(DatasetListing& l, const std::filesystem::path& p) {
  ++l.unmatched_files;
  if (l.unmatched_examples.size() < 5) l.unmatched_examples.push_back(p);
}

// "input.layout 'bop' (found scene_camera.json: BOP scene layout)": how messages name the layout.
std::string layout_label(const ResolvedInput& r);

// Refuses an explicit input.<key> pattern that the layout does not read (its frames come from an
// index file): ConfigError naming the key, the layout and what to do instead.
void refuse_pattern_key(const ResolvedInput& r, const char* key, const char* frames_from);

}  // namespace depthmask::layouts_detail
