#!/usr/bin/env python3
"""How many HAProxy pods may hold the queue a model served one request at a time shares.

`plan --emit-k8s` puts HAProxy in front of such a model with `balance leastconn` and `maxconn 1`
per replica: each replica takes one request at a time from the proxy and the rest wait in the
proxy's queue for the first replica free, the one queue (M/G/c) the plan was verified with. Each
HAProxy pod keeps its own queue and its own counts, so with two pods (kube-proxy sending each
client connection to one at random) a pod may send a request to a replica busy with the other's,
where it waits while another replica is idle. This replays that: Poisson arrivals split at random
over the pods, each pod's FIFO queue dispatching to a replica with none of its own requests (ties
in turn, as leastconn breaks them), each replica serving its requests in order. Service times:
the cluster-peak example's (lognormal, mean 1 s, cv 0.3), 60 replicas.

Prints the latency p50 and p99 behind one pod and behind two at the example's peak (57
requests/s: 95% busy) and at lighter loads. A what-if for the deployment's shape, not an
accuracy check: it has no budget. `plan`'s simulation of the example (one queue, 20,000
requests) gives p99 2.32 s at the peak.
"""
import heapq
import math
import random


def latencies(proxies, rate, replicas, cv, requests=200000, seed=1):
    rng = random.Random(seed)
    sigma = math.sqrt(math.log(1 + cv * cv))
    service = lambda: rng.lognormvariate(-sigma * sigma / 2, sigma)
    arrivals, t = [], 0.0
    for _ in range(requests):
        t += rng.expovariate(rate)
        arrivals.append(t)
    events = [(a, 0, i) for i, a in enumerate(arrivals)]
    heapq.heapify(events)
    queues = [[] for _ in range(proxies)]
    heads = [0] * proxies
    held = [[0] * replicas for _ in range(proxies)]  # a pod's requests on each replica
    local = [[] for _ in range(replicas)]              # each replica's requests, in order
    busy = [False] * replicas
    turn = [0] * proxies
    latency = [0.0] * requests

    def start(r, now):
        if not busy[r] and local[r]:
            request, pod = local[r].pop(0)
            busy[r] = True
            heapq.heappush(events, (now + service(), 1, (r, request, pod)))

    def dispatch(pod, now):
        while heads[pod] < len(queues[pod]):
            free = next(((turn[pod] + j) % replicas for j in range(replicas) if held[pod][(turn[pod] + j) % replicas] == 0), -1)
            if free < 0:
                return
            turn[pod] = (free + 1) % replicas
            request = queues[pod][heads[pod]]
            heads[pod] += 1
            held[pod][free] += 1
            local[free].append((request, pod))
            start(free, now)

    while events:
        now, kind, data = heapq.heappop(events)
        if kind == 0:
            pod = rng.randrange(proxies)
            queues[pod].append(data)
            dispatch(pod, now)
        else:
            r, request, pod = data
            busy[r] = False
            held[pod][r] -= 1
            latency[request] = now - arrivals[request]
            start(r, now)
            dispatch(pod, now)
    kept = sorted(latency[requests // 10:])  # the first tenth warms the queues up
    return kept[len(kept) // 2], kept[int(0.99 * len(kept))]


def main():
    print("%-10s %-6s %-8s %10s %10s" % ("rate/s", "busy", "proxies", "p50_s", "p99_s"))
    for rate in (57, 51, 42):
        for proxies in (1, 2):
            p50, p99 = latencies(proxies, rate, 60, 0.3)
            print("%-10g %-6s %-8d %10.3f %10.3f" % (rate, "%.0f%%" % (100 * rate / 60), proxies, p50, p99))


if __name__ == "__main__":
    main()
