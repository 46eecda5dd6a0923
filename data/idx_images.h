// How an IDX images file and its labels file make a Source's records, for
// both IDX sources (IdxSource, loaded; StreamedIdxSource, streamed), so that
// they check the same things, say the same errors and decode the same
// values: one float32 input "image", pixel * scale + offset, shaped as the
// spec says (default: the file's record dims), and int64 labels from a rank-1
// labels file with as many records. Stateless functions; thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "base/status.h"
#include "data/examples.h"
#include "data/idx_header.h"
#include "data/input_spec.h"
#include "data/source.h"

namespace edl::data {

// The "image" input of `images` (the header of `path`) under `spec`.
// InvalidArgument naming the file when spec.shape does not hold a record.
Result<InputInfo> IdxImageInput(const std::string& path, const IdxHeader& images,
                                const IdxSpec& spec);

// The labels files tried for an images file, in order: the name with
// "images-idx3" replaced by "labels-idx1", with and without ".gz".
std::vector<std::string> IdxLabelsPathCandidates(const std::string& path);

// The labels file of `path`: spec.labels_path, else the first candidate that
// exists; "" when there is none and `labels` is kIfPresent. NotFound naming
// the files tried under kRequired.
Result<std::string> FindIdxLabels(const std::string& path, const IdxSpec& spec, LabelPolicy labels);

// InvalidArgument naming the labels file unless it has rank 1 and as many
// records as the images file.
Status CheckIdxLabels(const std::string& labels_path, const IdxHeader& labels,
                      const std::string& images_path, const IdxHeader& images);

// dst[i] = src[i] * scale + offset for n bytes: the one conversion of pixels.
void DecodeIdxPixels(const uint8_t* src, int64_t n, float scale, float offset, float* dst);

}  // namespace edl::data
