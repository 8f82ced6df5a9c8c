// How one replica layout serves a request rate, per the planner's models: a queueing model of
// batched service for classic models, a steady-state step-time fixed point with Poisson bursts
// for continuous batching of LLMs (a replica across nodes as its micro-batch lanes).
#pragma once

#include "perf/throughput.h"
#include "plan/inference.h"
#include "plan/screen_engine.h"

namespace gw {

// The requests' lengths as continuous batching sees them: a trace's own (input, output) pairs
// (its sample), where long answers hold their batch slots longer; else the spec's means.
RequestLengths service_lengths(const ServiceSpec& service);

// evaluate_service with the service screened (screen_service) and its lengths worked out once.
ServiceLevel evaluate_with(const ModelSpec& model, const ServiceSpec& service, const ScreenEngine& engine, const RequestLengths& lengths,
                           const Configuration& config, int replicas, double rate_rps, const PlannerOptions& options);

}  // namespace gw
