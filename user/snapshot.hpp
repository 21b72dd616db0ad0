// Reconciling the model with what processes already hold: at attach, for processes that
// appear later (moved in, or first seen through an event), and (later) at checkpoint time.
#pragma once

#include <cstddef>
#include <cstdint>
#include <set>

namespace gw
{

class Model;
class Tracer;

// Adds the processes to the model (with their comm) and applies what the BPF iterators find
// in them: their DRM and dma-buf fds and their mappings of DRM files. Files found this way
// have unknown handle tables (the model marks them). Returns the number of records applied.
size_t snapshot_into(Tracer &tracer, Model &model, const std::set<uint32_t> &pids);

} // namespace gw
