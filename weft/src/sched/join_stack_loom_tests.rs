//! loom models of the join stack itself (join_stack.rs): the owner's
//! fence-free push and pop against thieves' locked steals, in the symmetric
//! mode that loom runs (both barriers are SeqCst fences; the asymmetric
//! mode's argument reduces to it, see barrier.rs). Each half is a distinct
//! `Half` in the model's frame; the models check that every half is taken
//! exactly once, by its frame's pop, a wait of the owner's, or a thief.

use std::sync::Arc;

use loom::thread;

use crate::sched::deque::Steal;
use crate::sched::job::JobRef;
use crate::sched::join_stack::{Half, JoinStack};

/// A stand-in half: `JobRef`'s two words, built from a marker address.
/// Never run: the models only count who took which.
fn half(id: usize) -> Half {
    let data = id as *mut ();
    // SAFETY: rebuilt from words that are never run (the models compare the
    // data word only), so the function word may be any pointer; each half
    // is taken once, as the models check.
    unsafe { Half::new(JobRef::from_stack_words(data, data), None) }
}

fn id_of(job: JobRef) -> usize {
    // SAFETY: made by `half`, whose data word is an initialised pointer.
    let (data, _) = unsafe { job.into_stack_words() };
    data as usize
}

/// The owner's push, its room settled as `join`'s cold path would.
fn push(stack: &JoinStack, half: &Half) {
    // SAFETY: the model's thread is the stack's only owner, and each half
    // outlives the thieves (they are joined before the halves drop).
    unsafe { stack.push_linked(half) };
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

/// Sorted, for comparing who took what.
fn sorted(mut ids: Vec<usize>) -> Vec<usize> {
    ids.sort_unstable();
    ids
}

#[test]
fn the_last_half_goes_to_exactly_one_of_owner_and_thief() {
    loom::model(|| {
        let stack = Arc::new(JoinStack::new());
        let only = half(1);
        push(&stack, &only);
        let thief = {
            let stack = Arc::clone(&stack);
            thread::spawn(move || steal_until_settled(&stack))
        };
        let owner_kept = stack.pop(&only);
        let stolen = thief.join().unwrap();
        assert!(
            owner_kept != stolen.is_some(),
            "taken once: {owner_kept} {stolen:?}"
        );
        assert!(stack.is_empty());
    });
}

#[test]
fn nested_halves_are_taken_once_each_and_the_list_empties() {
    // The owner pushes two nested halves and pops them back innermost
    // first, then pushes a third onto whatever the pops left; a thief
    // steals twice meanwhile.
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
        let (outer, inner, again) = (half(1), half(2), half(3));
        push(&stack, &outer);
        push(&stack, &inner);
        if stack.pop(&inner) {
            kept.push(2);
        }
        if stack.pop(&outer) {
            kept.push(1);
        }
        push(&stack, &again);
        if stack.pop(&again) {
            kept.push(3);
        }
        let stolen = thief.join().unwrap();
        let all = sorted(
            kept.into_iter()
                .chain(stolen.into_iter().flatten())
                .collect(),
        );
        // Each half by exactly one of them: none twice, none lost.
        assert_eq!(all, [1, 2, 3]);
        assert!(stack.is_empty());
    });
}

/// Two nested halves; a thief steals while the owner takes one half with
/// `owner_takes` and then pops both frames: each half goes to exactly one
/// of them, and the stack ends empty.
fn an_owners_take_against_a_thief(owner_takes: fn(&JoinStack) -> Option<JobRef>) {
    loom::model(move || {
        let stack = Arc::new(JoinStack::new());
        let (outer, inner) = (half(1), half(2));
        push(&stack, &outer);
        push(&stack, &inner);
        let thief = {
            let stack = Arc::clone(&stack);
            thread::spawn(move || steal_until_settled(&stack))
        };
        let mut taken: Vec<usize> = owner_takes(&stack).map(id_of).into_iter().collect();
        if stack.pop(&inner) {
            taken.push(2);
        }
        if stack.pop(&outer) {
            taken.push(1);
        }
        taken.extend(thief.join().unwrap());
        assert_eq!(sorted(taken), [1, 2], "each half taken once");
        assert!(stack.is_empty());
    });
}

#[test]
fn a_wait_of_the_owner_and_a_thief_take_from_opposite_ends() {
    // The owner's own wait takes the newest half while a thief steals the
    // oldest; the frame that pushed the newest then sees it taken.
    an_owners_take_against_a_thief(JoinStack::pop_newest);
}

#[test]
fn a_thief_and_a_share_take_each_half_once() {
    // A thief steals while the owner shares its oldest half and pops the
    // rest back: the lock orders the two takers. (Two thieves as well
    // took loom past ten minutes at two preemptions.)
    an_owners_take_against_a_thief(JoinStack::take_oldest);
}
