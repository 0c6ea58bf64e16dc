//! loom models of the join stack itself (join_stack.rs): the owner's
//! fence-free push and pop against a thief's steal, in the symmetric mode
//! that loom runs (both barriers are SeqCst fences; the asymmetric mode's
//! argument reduces to it, see barrier.rs). Each half is a distinct stack
//! job address; the models check that every half is taken exactly once,
//! including across the ring's wrap-around (capacity 2 under loom).

use std::sync::Arc;

use loom::thread;

use crate::sched::deque::Steal;
use crate::sched::job::JobRef;
use crate::sched::join_stack::JoinStack;

/// A stand-in half: `JobRef`'s two words, rebuilt from a marker address.
/// Never run: the models only count who took which.
fn half(id: usize) -> JobRef {
    let data = id as *mut ();
    // SAFETY: rebuilt from words that are never run (the models compare the
    // data word only), so the function word may be any pointer.
    unsafe { JobRef::from_stack_words(data, data) }
}

fn id_of(job: JobRef) -> usize {
    // SAFETY: made by `half`, whose data word is an initialised pointer.
    let (data, _) = unsafe { job.into_stack_words() };
    data as usize
}

fn push(stack: &JoinStack, id: usize) -> usize {
    // SAFETY: the model's thread is the stack's only owner, and the half's
    // data word is a pointer (see `half`).
    match unsafe { stack.try_push(half(id)) } {
        Ok(pushed) => pushed.index,
        Err(_) => panic!("the models stay within capacity"),
    }
}

fn steal_until_settled(stack: &JoinStack) -> Option<usize> {
    loop {
        match stack.steal() {
            Steal::Success(job) => return Some(id_of(job)),
            Steal::Empty => return None,
            Steal::Retry => thread::yield_now(),
        }
    }
}

#[test]
fn the_last_half_goes_to_exactly_one_of_owner_and_thief() {
    loom::model(|| {
        let stack = Arc::new(JoinStack::new());
        let index = push(&stack, 1);
        let thief = {
            let stack = Arc::clone(&stack);
            thread::spawn(move || steal_until_settled(&stack))
        };
        let owner_kept = stack.pop(index);
        let stolen = thief.join().unwrap();
        assert!(
            owner_kept != stolen.is_some(),
            "taken once: {owner_kept} {stolen:?}"
        );
        assert!(stack.is_empty());
    });
}

#[test]
fn nested_halves_are_taken_once_each_across_the_wrap() {
    // The owner pushes two nested halves, pops them back innermost first,
    // then pushes a third into a reused slot; a thief steals concurrently.
    loom::model(|| {
        let stack = Arc::new(JoinStack::new());
        let thief = {
            let stack = Arc::clone(&stack);
            thread::spawn(move || {
                let first = steal_until_settled(&stack);
                let second = steal_until_settled(&stack);
                [first, second]
            })
        };
        let mut kept = Vec::new();
        let outer = push(&stack, 1);
        let inner = push(&stack, 2);
        if stack.pop(inner) {
            kept.push(2);
        }
        if stack.pop(outer) {
            kept.push(1);
        }
        let again = push(&stack, 3);
        if stack.pop(again) {
            kept.push(3);
        }
        let stolen = thief.join().unwrap();
        let mut all: Vec<usize> = kept
            .into_iter()
            .chain(stolen.into_iter().flatten())
            .collect();
        all.sort_unstable();
        // Each half by exactly one of them: none twice, none lost.
        assert_eq!(all, [1, 2, 3]);
    });
}

#[test]
fn a_wait_of_the_owner_and_a_share_take_from_opposite_ends() {
    // The owner's own wait pops the newest half while a thief steals the
    // oldest; the frame that pushed the newest then sees it taken.
    loom::model(|| {
        let stack = Arc::new(JoinStack::new());
        let outer = push(&stack, 1);
        let inner = push(&stack, 2);
        let thief = {
            let stack = Arc::clone(&stack);
            thread::spawn(move || steal_until_settled(&stack))
        };
        let ran_by_wait = stack.pop_newest().map(id_of);
        let inner_back = stack.pop(inner);
        let outer_back = stack.pop(outer);
        let stolen = thief.join().unwrap();
        let mut taken: Vec<usize> = ran_by_wait.into_iter().chain(stolen).collect();
        if inner_back {
            taken.push(2);
        }
        if outer_back {
            taken.push(1);
        }
        taken.sort_unstable();
        assert_eq!(taken, [1, 2], "each half taken once");
    });
}
