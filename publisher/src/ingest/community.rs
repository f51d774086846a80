//! Deterministic Louvain community detection (Blondel et al. 2008) over the
//! entity-to-entity links of a dataset, for the SUMMARY's community levels.
//!
//! Written here rather than taken from a crate: the crates found (graphrs,
//! rust-igraph, graphina…) hold graphs as maps of node objects (several times
//! the memory of the compressed rows below, which `--mem` must bound) and
//! shuffle nodes with an RNG. This one visits nodes in id order, breaks ties
//! by the smaller community id and runs on one thread, so the result does not
//! depend on the thread count or on anything but the links.

use anyhow::Result;

/// An undirected weighted graph as compressed rows; every link appears in
/// the rows of both ends, a self-loop once.
pub struct Graph {
    offsets: Vec<u64>,
    targets: Vec<u32>,
    weights: Vec<f64>,
}

/// Bytes [`Graph::from_links`] and [`louvain`] need for `nodes` entities and `links` links.
pub fn estimate_bytes(nodes: u64, links: u64) -> u64 {
    // Rows while built: 24 bytes per node and per link; the aggregated graphs
    // together at most as much again; Louvain's arrays 32 bytes per node; a
    // membership of 4 bytes per node for each of up to 12 levels; the
    // summary's degree and member lists 16 more.
    48 * links + (24 + 32 + 48 + 16) * nodes
}

impl Graph {
    /// Builds the graph of `node_count` nodes from a replayable stream of
    /// links (`replay` is called twice and must yield the same links).
    pub fn from_links(node_count: usize, mut replay: impl FnMut(&mut dyn FnMut(u32, u32)) -> Result<()>) -> Result<Self> {
        let mut degrees = vec![0u64; node_count + 1];
        replay(&mut |a, b| {
            degrees[a as usize + 1] += 1;
            if a != b {
                degrees[b as usize + 1] += 1;
            }
        })?;
        for i in 1..degrees.len() {
            degrees[i] += degrees[i - 1];
        }
        let offsets = degrees;
        let mut fill = offsets.clone();
        let mut targets = vec![0u32; offsets[node_count] as usize];
        replay(&mut |a, b| {
            targets[fill[a as usize] as usize] = b;
            fill[a as usize] += 1;
            if a != b {
                targets[fill[b as usize] as usize] = a;
                fill[b as usize] += 1;
            }
        })?;
        drop(fill);
        // Merge repeated links into one weighted entry, row by row, in place.
        let mut weights = Vec::with_capacity(targets.len());
        let mut new_offsets = Vec::with_capacity(offsets.len());
        new_offsets.push(0u64);
        let mut write = 0usize;
        for node in 0..node_count {
            let row = &mut targets[offsets[node] as usize..offsets[node + 1] as usize];
            row.sort_unstable();
            let mut read = offsets[node] as usize;
            let end = offsets[node + 1] as usize;
            while read < end {
                let target = targets[read];
                let mut weight = 0.0;
                while read < end && targets[read] == target {
                    weight += 1.0;
                    read += 1;
                }
                targets[write] = target;
                weights.push(weight);
                write += 1;
            }
            new_offsets.push(write as u64);
        }
        targets.truncate(write);
        targets.shrink_to_fit();
        Ok(Self { offsets: new_offsets, targets, weights })
    }

    /// Nodes.
    pub fn node_count(&self) -> usize {
        self.offsets.len() - 1
    }

    /// Neighbours of a node with the link weights.
    pub fn row(&self, node: usize) -> impl Iterator<Item = (u32, f64)> + '_ {
        let range = self.offsets[node] as usize..self.offsets[node + 1] as usize;
        self.targets[range.clone()].iter().copied().zip(self.weights[range].iter().copied())
    }

    /// Weighted degree of a node (a self-loop counts twice, as in modularity).
    fn degree(&self, node: usize) -> f64 {
        self.row(node).map(|(t, w)| if t as usize == node { 2.0 * w } else { w }).sum()
    }

    /// The graph of communities: one node per community, link weights summed.
    fn aggregate(&self, community: &[u32], communities: usize) -> Self {
        let mut members: Vec<u32> = (0..self.node_count() as u32).collect();
        members.sort_by_key(|&node| community[node as usize]);
        let mut weight_to = vec![0.0f64; communities];
        let mut touched: Vec<u32> = Vec::new();
        let (mut offsets, mut targets, mut weights) = (vec![0u64], Vec::new(), Vec::new());
        let mut start = 0;
        for c in 0..communities {
            let end = start + members[start..].iter().take_while(|&&m| community[m as usize] as usize == c).count();
            for &member in &members[start..end] {
                for (target, weight) in self.row(member as usize) {
                    let tc = community[target as usize];
                    // A link inside the community is seen from both ends, a self-loop once.
                    let weight = if tc as usize == c && target != member { weight / 2.0 } else { weight };
                    if weight_to[tc as usize] == 0.0 {
                        touched.push(tc);
                    }
                    weight_to[tc as usize] += weight;
                }
            }
            touched.sort_unstable();
            for &tc in &touched {
                targets.push(tc);
                weights.push(weight_to[tc as usize]);
                weight_to[tc as usize] = 0.0;
            }
            touched.clear();
            offsets.push(targets.len() as u64);
            start = end;
        }
        Self { offsets, targets, weights }
    }
}

/// Communities at each level, finest first: `levels[l][node]` is the
/// community (0-based, numbered by first member) of each node of the input
/// graph, and `graphs[l]` is the graph of level `l`'s communities.
pub struct Hierarchy {
    /// Membership of every input node, per level.
    pub levels: Vec<Vec<u32>>,
    /// Communities per level.
    pub counts: Vec<usize>,
    /// The graph whose nodes are the communities of each level.
    pub graphs: Vec<Graph>,
}

/// Louvain: local moving until no node moves (or `MAX_PASSES`), then
/// aggregation, until a level merges nothing or `MAX_DEPTH` levels.
pub fn louvain(graph: &Graph) -> Hierarchy {
    const MAX_DEPTH: usize = 12;
    let mut hierarchy = Hierarchy { levels: Vec::new(), counts: Vec::new(), graphs: Vec::new() };
    let mut membership: Vec<u32> = (0..graph.node_count() as u32).collect();
    for depth in 0..MAX_DEPTH {
        let current = if depth == 0 { graph } else { &hierarchy.graphs[depth - 1] };
        let (community, count) = move_nodes(current);
        if count == current.node_count() {
            break;
        }
        for m in &mut membership {
            *m = community[*m as usize];
        }
        let aggregated = current.aggregate(&community, count);
        hierarchy.levels.push(membership.clone());
        hierarchy.counts.push(count);
        hierarchy.graphs.push(aggregated);
    }
    hierarchy
}

/// One Louvain level: each node in id order moves to the neighbouring
/// community with the best modularity gain (ties: smaller community id).
/// Returns communities renumbered by first node, and how many there are.
fn move_nodes(graph: &Graph) -> (Vec<u32>, usize) {
    const MAX_PASSES: usize = 16;
    let n = graph.node_count();
    let degree: Vec<f64> = (0..n).map(|i| graph.degree(i)).collect();
    let total: f64 = degree.iter().sum();
    let mut community: Vec<u32> = (0..n as u32).collect();
    if total == 0.0 {
        return (community, n);
    }
    let mut community_degree = degree.clone();
    let mut weight_to = vec![0.0f64; n];
    let mut touched: Vec<u32> = Vec::new();
    for _ in 0..MAX_PASSES {
        let mut moved = 0usize;
        for node in 0..n {
            let own = community[node];
            for (target, weight) in graph.row(node) {
                if target as usize == node {
                    continue;
                }
                let c = community[target as usize];
                if weight_to[c as usize] == 0.0 {
                    touched.push(c);
                }
                weight_to[c as usize] += weight;
            }
            community_degree[own as usize] -= degree[node];
            let gain = |c: u32| weight_to[c as usize] - community_degree[c as usize] * degree[node] / total;
            let (mut best, mut best_gain) = (own, gain(own));
            for &c in &touched {
                let g = gain(c);
                if g > best_gain || (g == best_gain && c < best) {
                    (best, best_gain) = (c, g);
                }
            }
            community_degree[best as usize] += degree[node];
            if best != own {
                community[node] = best;
                moved += 1;
            }
            for &c in &touched {
                weight_to[c as usize] = 0.0;
            }
            touched.clear();
        }
        if moved == 0 {
            break;
        }
    }
    let mut renumber = vec![u32::MAX; n];
    let mut next = 0u32;
    for c in &mut community {
        if renumber[*c as usize] == u32::MAX {
            renumber[*c as usize] = next;
            next += 1;
        }
        *c = renumber[*c as usize];
    }
    (community, next as usize)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn graph(links: &[(u32, u32)], nodes: usize) -> Graph {
        Graph::from_links(nodes, |emit| {
            links.iter().for_each(|&(a, b)| emit(a, b));
            Ok(())
        })
        .unwrap()
    }

    #[test]
    fn two_cliques_joined_by_a_bridge() {
        let mut links = Vec::new();
        for base in [0, 5] {
            for a in 0..5 {
                for b in a + 1..5 {
                    links.push((base + a, base + b));
                }
            }
        }
        links.push((4, 5));
        let hierarchy = louvain(&graph(&links, 10));
        let last = hierarchy.levels.last().unwrap();
        assert_eq!(&last[..5], &[0; 5]);
        assert_eq!(&last[5..], &[1; 5]);
        assert_eq!(*hierarchy.counts.last().unwrap(), 2);
        let top = hierarchy.graphs.last().unwrap();
        assert_eq!(top.row(0).collect::<Vec<_>>(), vec![(0, 10.0), (1, 1.0)]);
    }

    #[test]
    fn repeated_links_weigh_more() {
        let g = graph(&[(0, 1), (0, 1), (1, 2)], 3);
        assert_eq!(g.row(1).collect::<Vec<_>>(), vec![(0, 2.0), (2, 1.0)]);
        assert_eq!(g.degree(1), 3.0);
    }

    #[test]
    fn no_links_no_levels() {
        assert!(louvain(&graph(&[], 4)).levels.is_empty());
    }
}
