//! Order-keeping parallel map over a slice, for the inputs big enough to pay for a thread.

/// Maps `f` over `items` on up to as many threads as the machine has cores, each owning a contiguous
/// chunk of at least `min_per_thread` items (below that, spawning costs more than it saves) and its
/// own `state` (a cache), and returns the results in the items' order. The output is the
/// same as a sequential map's whenever `f`'s result does not depend on the state's history.
pub fn map_chunks<T, S, R, F>(
    items: &[T],
    min_per_thread: usize,
    state: impl Fn() -> S + Sync,
    f: F,
) -> Vec<R>
where
    T: Sync,
    R: Send,
    F: Fn(&mut S, &T) -> R + Sync,
{
    let cores = std::thread::available_parallelism().map_or(1, usize::from);
    let threads = cores.min(items.len() / min_per_thread.max(1)).max(1);
    let run = |chunk: &[T]| {
        let mut s = state();
        chunk.iter().map(|t| f(&mut s, t)).collect::<Vec<R>>()
    };
    if threads == 1 {
        return run(items);
    }
    let size = items.len().div_ceil(threads);
    std::thread::scope(|scope| {
        // A chunk whose thread the OS refuses (a pids limit) runs here, in its turn.
        let parts: Vec<_> = items
            .chunks(size)
            .map(|chunk| {
                std::thread::Builder::new()
                    .spawn_scoped(scope, move || run(chunk))
                    .map_err(|_| chunk)
            })
            .collect();
        let mut out = Vec::with_capacity(items.len());
        for part in parts {
            match part {
                Ok(h) => match h.join() {
                    Ok(part) => out.extend(part),
                    Err(panic) => std::panic::resume_unwind(panic),
                },
                Err(chunk) => out.extend(run(chunk)),
            }
        }
        out
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_order_across_threads_and_gives_each_thread_its_own_state() {
        let items: Vec<usize> = (0..3 * 100 + 7).collect();
        let out = map_chunks(
            &items,
            100,
            || 0usize,
            |seen, &i| {
                *seen += 1;
                (i * 2, *seen)
            },
        );
        assert_eq!(out.len(), items.len());
        assert!(out.iter().enumerate().all(|(i, (v, _))| *v == i * 2));
        // The state is per chunk: the first item of the input was the first its thread saw.
        assert_eq!(out[0].1, 1);
    }

    #[test]
    fn small_and_empty_inputs_run_on_one_thread() {
        let out = map_chunks(
            &[1, 2, 3],
            100,
            || 0usize,
            |seen, &i| {
                *seen += 1;
                i + *seen
            },
        );
        assert_eq!(out, vec![2, 4, 6]);
        assert!(map_chunks(&[] as &[u8], 100, || (), |_, &b| b).is_empty());
    }
}
