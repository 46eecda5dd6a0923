// ImageSource: image files (data/image_list.h) as records, each decoded
// (data/image_decoder.h) and resized (data/image_resize.h) when read, in
// the reading thread: one float32 input "image" [height, width, channels]
// and int64 class ids. Opening it lists the files and opens none, so a
// master that only counts records never decodes an image; every read
// decodes from disk (streamed(): workers read a task ahead while the one
// before trains). Memory: the file list plus what one read returns.
// Const and thread-safe.
#pragma once

#include <atomic>
#include <memory>
#include <string>
#include <vector>

#include "data/image_list.h"
#include "data/source.h"

namespace edl::data {

class ImageSource : public Source {
 public:
  // Errors name the folder or listing (ListImages).
  static Result<std::unique_ptr<ImageSource>> Open(const std::string& path, const ImageSpec& spec,
                                                   const OpenOptions& options);

  const std::string& name() const override { return name_; }
  int64_t num_records() const override { return static_cast<int64_t>(list_.files.size()); }
  bool has_labels() const override { return !list_.labels.empty(); }
  const std::vector<InputInfo>& inputs() const override { return inputs_; }
  // Errors name the file and what is wrong with it ("/data/cat/7.jpg: is a
  // corrupt or truncated JPEG (...)"), unless the source skips corrupt
  // records: then such a file is logged, counted and left out. A file that
  // cannot be read (gone, unreadable) is skipped alike.
  Result<Examples> Gather(const std::vector<int64_t>& indices) const override;
  bool streamed() const override { return true; }
  bool random_access() const override { return true; }
  int64_t corrupt_records_skipped() const override { return skipped_; }

  const ImageList& list() const { return list_; }
  // The path of record i's file.
  std::string FilePath(int64_t record) const;
  // Record i's pixels (height x width x channels floats) into `out`.
  Status DecodeRecord(int64_t record, float* out) const;

 private:
  ImageSource() = default;

  std::string name_;
  ImageSpec spec_;
  ImageList list_;
  std::vector<InputInfo> inputs_;
  bool skip_corrupt_ = false;
  mutable std::atomic<int64_t> skipped_{0};
};

// One encoded image (the bytes of a file or a TFRecord feature) to the
// spec's pixels: height x width x channels floats into `out`. Errors as
// DecodeImage's, without a name.
Status DecodeToInput(std::string_view bytes, const ImageSpec& spec, float* out);

}  // namespace edl::data
