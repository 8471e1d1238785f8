//! `tsort [FILE]`: a topological order of the pairs in FILE, by Knuth's
//! Algorithm T as GNU coreutils 9.1 runs it (items visited in byte
//! order, each loop reported on stderr and broken, exit 1).

use std::collections::BTreeMap;

use super::Process;
use super::args::Spec;
use crate::programs::quoting::quote_if_needed;

/// One string and its relations.
struct Item {
    name: Vec<u8>,
    /// Predecessors not yet output.
    count: usize,
    /// Successors, newest first as GNU's list keeps them.
    top: Vec<usize>,
    qlink: Option<usize>,
    printed: bool,
}

struct Graph {
    items: Vec<Item>,
    /// Item indices in byte order of their names (the tree's in-order).
    order: Vec<usize>,
    loop_at: Option<usize>,
}

impl Graph {
    fn build(tokens: &[&[u8]]) -> Self {
        let mut index: BTreeMap<Vec<u8>, usize> = BTreeMap::new();
        let mut items: Vec<Item> = Vec::new();
        let mut id = |t: &[u8], items: &mut Vec<Item>| -> usize {
            *index.entry(t.to_vec()).or_insert_with(|| {
                items.push(Item {
                    name: t.to_vec(),
                    count: 0,
                    top: Vec::new(),
                    qlink: None,
                    printed: false,
                });
                items.len() - 1
            })
        };
        for pair in tokens.chunks(2) {
            let j = id(pair[0], &mut items);
            if let Some(second) = pair.get(1) {
                let k = id(second, &mut items);
                if items[j].name != items[k].name {
                    items[k].count += 1;
                    items[j].top.insert(0, k);
                }
            }
        }
        let order = index.values().copied().collect();
        Self {
            items,
            order,
            loop_at: None,
        }
    }

    /// GNU's detect_loop for item `k`; true once a loop was printed and
    /// one of its relations removed.
    fn detect_loop(&mut self, k: usize, p: &Process<'_>) -> bool {
        if self.items[k].count == 0 {
            return false;
        }
        let Some(start) = self.loop_at else {
            self.loop_at = Some(k);
            return false;
        };
        let Some(pos) = self.items[k].top.iter().position(|&s| s == start) else {
            return false;
        };
        if self.items[k].qlink.is_none() {
            self.items[k].qlink = Some(start);
            self.loop_at = Some(k);
            return false;
        }
        let mut cur = self.loop_at;
        while let Some(l) = cur {
            let next = self.items[l].qlink;
            p.error(&String::from_utf8_lossy(&self.items[l].name));
            if l == k {
                let removed = self.items[k].top.remove(pos);
                self.items[removed].count -= 1;
                break;
            }
            self.items[l].qlink = None;
            cur = next;
        }
        while let Some(l) = cur {
            let next = self.items[l].qlink;
            self.items[l].qlink = None;
            cur = next;
        }
        self.loop_at = None;
        true
    }

    /// Algorithm T; returns the output and whether there was no loop.
    fn sort(&mut self, p: &Process<'_>, file: &str) -> (Vec<u8>, bool) {
        let mut out = Vec::new();
        let mut ok = true;
        let mut left = self.items.len();
        while left > 0 {
            let mut queue: std::collections::VecDeque<usize> = self
                .order
                .iter()
                .copied()
                .filter(|&i| self.items[i].count == 0 && !self.items[i].printed)
                .collect();
            while let Some(head) = queue.pop_front() {
                out.extend_from_slice(&self.items[head].name);
                out.push(b'\n');
                self.items[head].printed = true;
                left -= 1;
                for s in self.items[head].top.clone() {
                    self.items[s].count -= 1;
                    if self.items[s].count == 0 {
                        queue.push_back(s);
                    }
                }
            }
            if left > 0 {
                p.error(&format!(
                    "{}: input contains a loop:",
                    quote_if_needed(file)
                ));
                ok = false;
                loop {
                    let order = self.order.clone();
                    for i in order {
                        if self.detect_loop(i, p) {
                            break;
                        }
                    }
                    if self.loop_at.is_none() {
                        break;
                    }
                }
            }
        }
        (out, ok)
    }
}

pub(crate) fn tsort(p: &mut Process<'_>, argv: &[String]) -> i32 {
    let spec = Spec {
        short: "",
        long: &[],
    };
    let args = match super::parse_args(p, &spec, argv, 1) {
        Ok(a) => a,
        Err(status) => return status,
    };
    if let Some(extra) = args.operands.get(1) {
        return super::usage(p, &format!("extra operand {}", p.quote(extra)), 1);
    }
    let file = args.operands.first().map_or("-", String::as_str);
    let data = match super::read_input(p, file) {
        Ok(d) => d,
        Err(e) => {
            super::file_error(p, file, &e);
            return 1;
        }
    };
    let tokens: Vec<&[u8]> = data
        .split(|&b| b == b' ' || b == b'\t' || b == b'\n')
        .filter(|t| !t.is_empty())
        .collect();
    if tokens.len() % 2 == 1 {
        p.error(&format!(
            "{}: input contains an odd number of tokens",
            quote_if_needed(file)
        ));
        return 1;
    }
    let mut graph = Graph::build(&tokens);
    let (out, ok) = graph.sort(p, file);
    super::write_all(p, &out);
    i32::from(!ok)
}
