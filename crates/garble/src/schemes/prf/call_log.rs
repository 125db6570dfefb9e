//! A test hook: the (key, PRF input) pair of every PRF call the garbler and evaluator make
//! on a thread while a test listens, for the tests of their uniqueness (docs/garbling.md
//! §7.6).

use std::cell::RefCell;

use transputation_core::Block;

thread_local! {
    /// The (key, plaintext) pairs of every PRF call made on this thread while listening.
    static CALLS: RefCell<Option<Vec<(Block, Block)>>> = const { RefCell::new(None) };
}

/// The test hook in `flush`: records `blocks[i]` encrypted under `keys[i / per_key]`.
pub(super) fn record(keys: &[Block], blocks: &[Block], per_key: usize) {
    CALLS.with(|calls| {
        if let Some(log) = calls.borrow_mut().as_mut() {
            log.extend(
                blocks
                    .iter()
                    .enumerate()
                    .map(|(i, &b)| (keys[i / per_key], b)),
            );
        }
    });
}

/// Starts recording PRF calls on this thread.
pub(super) fn listen() {
    CALLS.with(|calls| *calls.borrow_mut() = Some(Vec::new()));
}

/// The calls since `listen`, and stops recording.
pub(super) fn recorded() -> Vec<(Block, Block)> {
    CALLS.with(|calls| calls.borrow_mut().take().expect("listening"))
}
