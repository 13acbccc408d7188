#include "depthmask/frame_writer.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <system_error>
#include <utility>

#include "depthmask/bag_output.h"
#include "depthmask/detail/pass_runner.h"
#include "depthmask/detail/png_codec.h"
#include "depthmask/errors.h"
#include "depthmask/run_files.h"
#include "depthmask/shard_spec.h"

namespace fs = std::filesystem;

namespace depthmask {

const cv::Mat& Backprojector::run(FrameSlot& slot, const Pinhole& k, float invalid) {
  const cv::Mat& out = slot.out();
  DM_EXPECT(!out.empty() && out.type() == CV_32FC1 && out.isContinuous(), std::logic_error,
            "Backprojector::run() before run_mask()");
  const size_t out_bytes = out.total() * sizeof(float);
  const size_t bytes = out.total() * 3 * sizeof(float);
  if (xyz_buf_.size() < bytes) {
    xyz_ = cv::Mat();
    xyz_buf_ = Buffer();  // free the old one first: peak memory stays one buffer
    xyz_buf_ = backend_->allocate(bytes);
  }
  xyz_ = cv::Mat(out.rows, out.cols, CV_32FC3, xyz_buf_.host());

  BackprojectJob job;
  job.rows = out.rows;
  job.cols = out.cols;
  job.invalid = invalid;
  job.k = k;
  // The slot's side: after run_mask on the device, the depth's device copy is fresh (no upload).
  const detail::PassRunner passes(*backend_, slot.stream(), slot.wait());
  passes.run([&] {
    job.depth = passes.in<const float>(slot.out_buffer(), out_bytes, out.step[0]);
    job.xyz = passes.at<float>(xyz_buf_, xyz_.step[0]);
    passes.pass(
        xyz_buf_, [&](CUstream_st* s) { launch_backproject(job, s); }, [&] { backproject_cpu(job); });
    passes.to_host(xyz_buf_, bytes);
  });
  return xyz_;
}

FrameWriter::FrameWriter(const Config& c, MemoryBackend& backend)
    : c_(&c), shard_tag_(shard_tag(c)), backend_(&backend), backprojector_(backend) {}

bool wants_reason(const Config& c) {
  const auto& f = c.output.formats;
  return std::find(f.begin(), f.end(), OutputFormat::Reason) != f.end() ||
         (c.output.mcap.reason && std::find(f.begin(), f.end(), OutputFormat::Mcap) != f.end());
}

bool FrameWriter::wants_color() const {
  const auto& f = c_->output.formats;
  return c_->output.preview || std::find(f.begin(), f.end(), OutputFormat::Ply) != f.end();
}

namespace {

// The intrinsics for the point cloud, checked against the image they will backproject.
Pinhole ply_intrinsics(const std::optional<Intrinsics>& k, const cv::Mat& out) {
  DM_EXPECT(k.has_value(), InputError,
            "output.format 'ply' needs camera intrinsics to backproject the depth: set input.intrinsics "
            "(a file, or {fx, fy, cx, cy})");
  DM_EXPECT(k->valid() && std::isfinite(k->fx) && std::isfinite(k->fy) && std::isfinite(k->cx) && std::isfinite(k->cy),
            InputError,
            "output.format 'ply': the intrinsics (fx " << k->fx << ", fy " << k->fy << ", cx " << k->cx << ", cy "
                                                       << k->cy << ") need finite values and positive focal lengths");
  DM_EXPECT((k->width <= 0 || k->width == out.cols) && (k->height <= 0 || k->height == out.rows), InputError,
            "output.format 'ply': the intrinsics are for "
                << k->width << "x" << k->height << " images but the depth is " << out.cols << "x" << out.rows);
  return make_pinhole(k->fx, k->fy, k->cx, k->cy);
}

fs::path canonical_or_self(const fs::path& p) {
  std::error_code ec;
  fs::path r = fs::weakly_canonical(p, ec);
  return ec ? p.lexically_normal() : r;
}

// What an encoder gets: the masked frame and what some formats need besides it.
struct EncodeInput {
  const Config& c;
  const FrameEntry& f;
  FrameSlot& slot;
  Backprojector& backprojector;
};

FileBytes encode_tiff_output(const EncodeInput& in) { return tiff_file(in.slot.out()); }
FileBytes encode_npy_output(const EncodeInput& in) { return npy_file(in.slot.out()); }
FileBytes encode_exr_output(const EncodeInput& in) { return FileBytes(encode_exr(in.slot.out())); }
FileBytes encode_png16_output(const EncodeInput& in) {
  return FileBytes(encode_png16_mm(in.slot.out(), in.c.output.invalid));
}
// {id}.reason.png: the reason pass's codes (kernels/drop_reason.h), 8-bit greyscale, 0 where kept.
FileBytes encode_reason_output(const EncodeInput& in) {
  const cv::Mat& reason = in.slot.reason();
  DM_EXPECT(!reason.empty() && reason.size() == in.slot.out().size(), std::logic_error,
            "output.format 'reason' without the slot's reason pass (FrameSlot::set_reason)");
  return FileBytes(detail::encode_png_grey8(reason.data, reason.rows, reason.cols, reason.step[0]));
}
FileBytes encode_ply_output(const EncodeInput& in) {
  const cv::Mat& out = in.slot.out();
  const Pinhole k = ply_intrinsics(frame_intrinsics(in.c, in.f), out);
  const cv::Mat& xyz = in.backprojector.run(in.slot, k, in.c.output.invalid);
  const cv::Mat& color = in.slot.color();
  const bool rgb = !color.empty() && color.type() == CV_8UC3 && color.size() == out.size();
  return FileBytes(encode_ply(xyz, rgb ? color : cv::Mat()));
}

// The output formats: format -> file extension -> encoder. The JSON sidecar has no encoder here: it
// lists the frame's other files, so FrameWriter::write() writes it last.
struct FormatRow {
  OutputFormat format;
  const char* extension;
  FileBytes (*encode)(const EncodeInput&);
};
constexpr FormatRow kFormats[] = {
    {OutputFormat::Tiff, "tiff", encode_tiff_output},
    {OutputFormat::Npy, "npy", encode_npy_output},
    {OutputFormat::Exr, "exr", encode_exr_output},
    {OutputFormat::Png16, "mm.png", encode_png16_output},
    {OutputFormat::Ply, "ply", encode_ply_output},
    {OutputFormat::Json, "json", nullptr},
    {OutputFormat::Reason, "reason.png", encode_reason_output},
    {OutputFormat::Mcap, nullptr, nullptr},  // no file per frame: the run's bag (bag_output.h)
};
constexpr const char* kPreviewExtension = "preview.png";

const FormatRow& format_row(OutputFormat f) {
  for (const FormatRow& r : kFormats)
    if (r.format == f) return r;
  throw std::logic_error("output format " + std::to_string(static_cast<int>(f)) + " has no row in kFormats");
}

}  // namespace

void check_outputs_spare_inputs(const Config& c, const DatasetListing& listing) {
  // Canonical folders, each resolved once (symlinked folders compare as where they lead).
  std::map<fs::path, fs::path> folders;
  auto canon = [&](const fs::path& p) {
    const fs::path parent = p.parent_path();
    auto it = folders.find(parent);
    if (it == folders.end()) it = folders.emplace(parent, canonical_or_self(parent)).first;
    return it->second / p.filename();
  };
  std::map<fs::path, std::string> inputs;  // canonical input file -> the frame it belongs to
  for (const FrameEntry& f : listing.frames) {
    for (const fs::path* p : {&f.depth, &f.mask, &f.color})
      if (!p->empty()) inputs.emplace(canon(*p), f.id);
    for (const auto& inst : f.instances) inputs.emplace(canon(inst.second), f.id);
  }
  if (!c.input.intrinsics_file.empty()) inputs.emplace(canon(c.input.intrinsics_file), "");
  auto refuse = [&](const fs::path& out, const fs::path& canonical, const std::string& frame) {
    const auto hit = inputs.find(canonical);
    if (hit == inputs.end()) return;
    throw ConfigError("output '" + out.string() + "'" + (frame.empty() ? "" : " of frame " + frame) +
                      " would overwrite the input file '" + hit->first.string() + "'" +
                      (hit->second.empty() ? "" : " of frame " + hit->second) +
                      "; choose an output.dir that holds no input files");
  };
  std::vector<std::string> exts;
  for (const OutputFormat fmt : c.output.formats)
    if (format_row(fmt).extension != nullptr) exts.push_back(format_row(fmt).extension);
  if (c.output.preview) exts.push_back(kPreviewExtension);
  // The run's own files beside the frames': the manifest, the run record and the QA report.
  for (const char* name : {kManifestName, kRunRecordName, kReportName, kBagName, kBagMetadataName}) {
    const fs::path own = c.output.dir / name;
    refuse(own, canon(own), "");
  }
  for (const FrameEntry& f : listing.frames) {
    fs::path stem;
    try {
      stem = output_stem(c.output, f, c.input.root);
    } catch (const ConfigError&) {
      continue;  // a frame mirror cannot place fails on its own, when it is written
    }
    for (const std::string& ext : exts) {
      const fs::path out = with_ext(stem, ext);
      refuse(out, canon(out), f.id);
    }
  }
}

std::vector<OutputFile> FrameWriter::write(const FrameEntry& f, FrameSlot& slot, FrameStats* stats) {
  const Config& c = *c_;
  const cv::Mat& out = slot.out();
  const float invalid = c.output.invalid;
  const fs::path stem = output_stem(c.output, f, c.input.root);
  // One pass for the manifest's numbers and the sidecar's kept_pixels.
  const FrameStats kept = frame_stats(out, invalid, HistogramSpec::of(c));

  // Encode everything first: a frame that cannot be encoded (a PLY without intrinsics) writes nothing.
  // TIFF and NPY are views of `out`, which the slot holds until the frame is committed.
  std::vector<std::pair<fs::path, FileBytes>> files;
  const EncodeInput in{c, f, slot, backprojector_};
  for (const OutputFormat fmt : c.output.formats) {
    const FormatRow& row = format_row(fmt);
    if (row.encode != nullptr) files.emplace_back(with_ext(stem, row.extension), row.encode(in));
  }
  if (c.output.preview) {
    // libdeflate, as the reason PNGs: cv::imencode made a 30 fps live run with previews drop frames.
    const cv::Mat preview = make_preview(slot.color(), slot.mask(), out, invalid, slot.reason());
    files.emplace_back(with_ext(stem, kPreviewExtension),
                       FileBytes(detail::encode_png_bgr8(preview.data, preview.rows, preview.cols, preview.step)));
  }
  if (std::find(c.output.formats.begin(), c.output.formats.end(), OutputFormat::Json) != c.output.formats.end()) {
    SidecarInfo s;
    s.id = f.id;
    s.depth_scale = f.depth_scale.value_or(c.depth.scale);
    s.depth_input_float = slot.depth().type() == CV_32FC1;
    s.depth_min = c.depth.min;
    s.depth_max = c.depth.max;
    s.invalid = invalid;
    s.intrinsics = frame_intrinsics(c, f);
    s.depth_file = f.depth;
    s.mask_file = f.mask;
    s.color_file = f.color;
    s.backend = std::string(to_string(backend_->kind()));
    s.width = out.cols;
    s.height = out.rows;
    s.kept_pixels = kept.kept;
    for (const auto& file : files) s.outputs.push_back(file.first.filename().string());
    const std::string text = encode_sidecar(s);
    files.emplace_back(with_ext(stem, format_row(OutputFormat::Json).extension),
                       FileBytes(std::vector<uint8_t>(text.begin(), text.end())));
  }

  // Never overwrite an input (an output folder inside the input's, with matching names).
  std::vector<fs::path> inputs{canonical_or_self(f.depth), canonical_or_self(f.mask)};
  if (!f.color.empty()) inputs.push_back(canonical_or_self(f.color));
  for (const auto& inst : f.instances) inputs.push_back(canonical_or_self(inst.second));
  for (const auto& file : files) {
    const fs::path p = canonical_or_self(file.first);
    DM_EXPECT(std::find(inputs.begin(), inputs.end(), p) == inputs.end(), ConfigError,
              "output '" << file.first.string()
                         << "' would overwrite an input file of this frame; choose another output.dir");
  }
  if (stem.has_parent_path() && c.output.layout == OutputLayout::Mirror) {
    std::error_code ec;
    fs::create_directories(stem.parent_path(), ec);
    DM_EXPECT(!ec, OutputError,
              "cannot create output folder '" << stem.parent_path().string() << "': " << ec.message());
  }

  std::vector<OutputFile> written;
  for (const auto& [path, bytes] : files) {
    write_file_atomic(path, bytes, c.output.fsync, shard_tag_);
    written.push_back({path.lexically_relative(c.output.dir).generic_string(), bytes.size(), bytes.crc32()});
  }
  if (stats) stats->add(kept);
  return written;
}

}  // namespace depthmask
