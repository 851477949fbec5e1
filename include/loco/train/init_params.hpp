#pragma once
// A run's initial parameters from a safetensors file (`--init FILE`) instead of the seed: a model
// trained elsewhere, e.g. nanoGPT's GPT saved with the safetensors package. The file must hold
// exactly the model's tensors, by nanoGPT's names and shapes (loco's parameter names are
// nanoGPT's state-dict keys, Linear weights [out, in]; see loco/model/gpt.hpp), in any dtype the
// reader converts to fp32 (F32, F16, BF16, F64).
//
// nanoGPT ties lm_head.weight to transformer.wte.weight, as loco does: its state dict holds both,
// and safetensors.torch.save_model keeps only lm_head.weight. So either may stand for the token
// embedding; when both are present they must be equal. nanoGPT's causal-mask buffers
// (transformer.h.<l>.attn.bias, [1, 1, T, T], in state dicts saved with torch < 2.0) are skipped.

#include <filesystem>
#include <string>

#include "loco/core/arena.hpp"

namespace loco::train {

// The name PyTorch gives the tied LM head, accepted in place of the token embedding.
inline constexpr const char* kTiedHeadName = "lm_head.weight";
inline constexpr const char* kTokenEmbeddingName = "transformer.wte.weight";

// Fills every tensor of `params` from `path`. Throws Error(format) naming the file and the tensor
// when one is missing, extra, of another shape (both shapes named) or a tied head differs from
// the embedding; Error(io) or Error(format) when the file cannot be read (safetensors.hpp).
void load_init_params(const std::filesystem::path& path, Arena& params);

// BLAKE2b-256 of the file's bytes, in hex: the run's shared settings carry it (run_settings.hpp)
// so every peer starts from the same file. Throws Error(io) when the file cannot be read.
std::string init_file_digest(const std::filesystem::path& path);

}  // namespace loco::train
