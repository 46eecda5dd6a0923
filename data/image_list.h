// ImageList: the image files a data flag names, in record order, with
// their class ids. Listing never opens an image (the master counts records
// from the list alone), and the list of a folder is cached in the folder
// (".edl-images.lst", or under the index directory when the folder is not
// writable) and reused while no folder in it has changed.
//
// A folder with one subfolder per class (the ImageNet layout Keras'
// image_dataset_from_directory reads): class ids by sorted folder name
// (or by the spec's class_names), files found at any depth below their
// class folder. Records are in a fixed pseudo-random order (by a hash of
// each file's path) so that every range of records, and so every task,
// holds every class. A folder of images without subfolders is unlabeled
// data (prediction), in name order.
//
// One JPEG or PNG file: one unlabeled record (prediction).
//
// A *.csv file with a header row naming a "path" column (relative to the CSV
// file's folder, or absolute) and optionally a "label" column of class
// names: records in the listing's order.
//
// Files are *.jpg, *.jpeg, *.png (any case); names starting with '.' or
// '_' are left out.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "base/status.h"
#include "data/source.h"

namespace edl::data {

struct ImageList {
  std::string root;                      // files are relative to it
  std::vector<std::string> class_names;  // class id i is class_names[i]
  std::vector<std::string> files;        // relative to root (or absolute)
  std::vector<int64_t> labels;           // per file; empty: unlabeled
};

// `class_names` (the spec's; empty: found) fixes the ids: a class folder or
// label not among them is an error. Errors name the folder or the CSV
// file and line: no images, an empty class folder, a listing without a
// "path" column, unlabeled data where labels are required.
Result<ImageList> ListImages(const std::string& path, const std::vector<std::string>& class_names,
                             LabelPolicy labels, const std::string& index_dir);

// The class names `path` defines (its class folders' names, or a
// listing's labels, sorted); empty for unlabeled data.
Result<std::vector<std::string>> FindImageClassNames(const std::string& path,
                                                     const std::string& index_dir);

// Whether a file name is one ListImages takes (by extension).
bool IsImageFileName(const std::string& name);

}  // namespace edl::data
