// Protein contact maps for the CVAE: a text format, a reader (a DataSource of residues x
// residues binary maps, 1 channel) and a generator from a coarse chain model.
//
// Format (dlscale contact maps v1), UTF-8 text, one frame per line after the header:
//   # dlscale contact maps v1
//   # residues 28
//   # frames 1000
//   # cutoff_angstrom 8        (optional: recorded, not used by the reader)
//   0-1 0-2 1-2 1-3 ...        the contacts of one frame: 0-based residue pairs i-j with i < j
// Lines that start with '#' after the header are comments; an empty line is a frame with no
// contacts. The map is symmetric with ones on the diagonal (a residue's C-alpha is within the
// cutoff of itself), as a thresholded distance matrix is.
//
// The chain model (generate_contact_maps): C-alpha traces of `residues` beads, 3.8 Angstrom
// apart, that wander between three states as a folding simulation does (a slow Markov chain:
// each frame stays in its state with probability 0.98): an alpha helix (radius 2.3, rise 1.5,
// 100 degrees a residue), a beta hairpin (two antiparallel strands 4.8 apart, turn in the
// middle) and an unfolded coil (a random walk with bond angles near 110 degrees, redrawn when
// the state is entered). Every frame adds thermal noise (0.6 Angstrom per coordinate). Contacts
// are pairs within `cutoff` (8 Angstrom, the native-contact rule of the CVAE paper).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "apps/data/data_source.hpp"

namespace dls {

struct ContactFrame {
  std::vector<std::pair<int, int>> contacts;  // i < j
  int state = 0;                              // the generator's state (0 helix, 1 hairpin, 2 coil)
};

std::vector<ContactFrame> generate_contact_maps(int residues, long frames, std::uint64_t seed,
                                                double cutoff = 8.0);
// Writes the format above; throws Error on I/O failure (the file is written to a temporary name
// and renamed, so a failed write leaves no partial file).
void write_contact_maps(const std::string& path, int residues,
                        const std::vector<ContactFrame>& frames, double cutoff = 8.0);

std::unique_ptr<DataSource> open_contact_maps(const std::string& path);
// The generator's frames as a source, without a file.
std::unique_ptr<DataSource> contact_map_source(int residues, std::vector<ContactFrame> frames,
                                               std::string what);

}  // namespace dls
