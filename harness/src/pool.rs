//! The one fan-out of the CLI and the benchmark (`cargo test` uses
//! libtest-mimic's): a fixed number of worker threads take items in order,
//! and results are handed back in item order, so output stays stable
//! whatever finishes first.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc;

/// Cores available to this process; the default number of jobs.
pub fn default_jobs() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// Applies `work` to every item on `jobs` threads. `each` sees every result
/// in item order as soon as it and all before it are done.
pub fn map_ordered<T, R>(items: &[T], jobs: usize, work: impl Fn(&T) -> R + Sync, mut each: impl FnMut(usize, &R)) -> Vec<R>
where
    T: Sync,
    R: Send,
{
    let next = AtomicUsize::new(0);
    let (tx, rx) = mpsc::channel::<(usize, R)>();
    let mut done: Vec<Option<R>> = items.iter().map(|_| None).collect();
    std::thread::scope(|scope| {
        for _ in 0..jobs.clamp(1, items.len().max(1)) {
            let tx = tx.clone();
            let (next, work) = (&next, &work);
            scope.spawn(move || loop {
                let i = next.fetch_add(1, Ordering::SeqCst);
                let Some(item) = items.get(i) else { break };
                if tx.send((i, work(item))).is_err() {
                    break;
                }
            });
        }
        drop(tx);
        let mut shown = 0;
        for (i, r) in rx {
            done[i] = Some(r);
            while let Some(Some(r)) = done.get(shown) {
                each(shown, r);
                shown += 1;
            }
        }
    });
    done.into_iter().map(|r| r.expect("every item produces a result")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn results_come_back_in_item_order_whatever_finishes_first() {
        let items: Vec<u64> = (0..20).collect();
        let mut seen = Vec::new();
        let out = map_ordered(&items, 4, |&n| {
            std::thread::sleep(std::time::Duration::from_millis((20 - n) * 2));
            n * 10
        }, |i, r| seen.push((i, *r)));
        assert_eq!(out, (0..20).map(|n| n * 10).collect::<Vec<_>>());
        assert_eq!(seen, (0..20).map(|n| (n as usize, n * 10)).collect::<Vec<_>>());
    }

    #[test]
    fn no_items_and_more_jobs_than_items_are_fine() {
        assert!(map_ordered(&[] as &[u8], 8, |_| 1, |_, _| {}).is_empty());
        assert_eq!(map_ordered(&[1, 2], 8, |n| n + 1, |_, _| {}), vec![2, 3]);
    }
}
