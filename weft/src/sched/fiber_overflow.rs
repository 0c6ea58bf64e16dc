//! A fiber's stack overflow, reported as the standard library reports a
//! thread's: a line naming the thread, then an abort.
//!
//! Every fiber stack has a guard page below it (fiber_stack.rs), so an
//! overflow faults there instead of writing over whatever lies below.
//! The standard library's own handler of `SIGSEGV` knows only the guard
//! of the *thread's* stack: for a fault anywhere else it restores the
//! default action and returns, the fault repeats, and the process dies of
//! a bare segmentation fault, with no word of a stack.
//!
//! So the process's first fiber stack installs a handler in front
//! ([`install`]). It looks at faults the kernel raised for a memory
//! access (`si_code > 0`, not a signal sent with `kill` or `raise`)
//! whose address lies near the interrupted stack pointer
//! ([`is_overflow`]): where the address is in the guard page of
//! the fiber running on the faulting thread ([`note_running_floor`], the
//! lowest page of that fiber's mapping), it writes "thread 'NAME' (ID)
//! has overflowed its stack" and the setting that sizes the stack to
//! standard error, and aborts.
//!
//! Every other signal goes to the action that was installed before ours
//! ([`pass_on`]). A handler of the standard library's kind (`SA_SIGINFO`
//! and `SA_ONSTACK`, no `SA_RESETHAND`) is called directly, under its
//! own signal mask; anything else (the default action, `SIG_IGN`, a
//! handler with other flags) is put back in ours' place and left to the
//! kernel: a fault repeats into it as our handler returns, and a signal
//! sent by `kill` or `raise` is raised again, so that the process meets
//! what it would have met without weft, with that action's own flags.
//! (Once put back, ours is gone: a program whose own handler recovers
//! from faults, and was installed before weft's with other flags than
//! the standard library's, loses the report of later overflows.) On
//! Linux a guard page's fault is `SIGSEGV`, the one signal taken in.
//!
//! # Why this is safe in a signal handler
//!
//! The handler reads the signal's own `siginfo_t` and context, the
//! previous actions (written once before the handler is installed, read
//! with Acquire), and, only for a fault near the stack pointer, a
//! thread-local with a constant initialiser and no destructor (its first
//! access needs no allocation where weft is linked into the executable;
//! in a library loaded with `dlopen` it could, which the filter by the
//! stack pointer keeps away from faults that are not overflows). It
//! names the thread through `prctl` and `gettid` (system calls), writes
//! with `write(2)` and ends with `abort`; passing on uses `sigaction`,
//! `pthread_sigmask` and `raise`. All are async-signal-safe. It runs on
//! the thread's alternate signal stack (`SA_ONSTACK`), which the standard
//! library gives every thread it starts while its own handler is
//! installed, weft's workers among them (8 KiB: the handler's frames are
//! a few hundred bytes); on a thread with no alternate stack the handler
//! cannot run on the exhausted fiber stack, and the process dies of the
//! fault as before.
//!
//! Miri cannot run a signal handler and loom has no fibers; the module
//! is left out there, and tested by child processes (tests/death.rs):
//! overflows on a fiber, inside `weft::blocking` and on a thread, a fault
//! off the guard page, a handler installed before weft's with
//! `SA_RESETHAND`, and a raised `SIGSEGV` under the default action.

use std::cell::Cell;
use std::ptr;
use std::sync::{Once, OnceLock};

use libc::{c_int, c_void, siginfo_t};

/// How far below the interrupted stack pointer a fault may lie and still
/// be looked at as an overflow. A frame's stack probes move the stack
/// pointer a page at a time and touch each page (x86_64, AArch64), so an
/// overflow faults within a page of it; the bound leaves room for a
/// probe that touches a large frame from above without moving it.
const NEAR_THE_STACK_POINTER: usize = 4 << 20;

/// What the handler reads besides the signal's own state, set once before
/// it is installed (an `OnceLock`, read with Acquire: whoever sees the
/// handler installed and runs it sees this).
struct Installed {
    /// The action installed for `SIGSEGV` before this handler.
    previous: libc::sigaction,
    /// The size of a guard page (`sysconf` is not async-signal-safe).
    page: usize,
}

static INSTALLED: OnceLock<Installed> = OnceLock::new();

thread_local! {
    /// The lowest address of the mapping of the fiber running on this
    /// thread, its guard page; 0 on the thread's own stack. Set by the
    /// fibers as they switch (fiber.rs, `enter` and `leave`), and left
    /// alone by `weft::blocking`, which hides the thread's worker but
    /// runs its call on the same fiber.
    static RUNNING_FLOOR: Cell<usize> = const { Cell::new(0) };
}

/// Records the floor of the fiber this thread now runs on (0: none).
#[inline]
pub(crate) fn note_running_floor(floor: usize) {
    RUNNING_FLOOR.with(|running| running.set(floor));
}

/// Installs the handler, once a process; called before the first fiber
/// stack is handed out.
pub(crate) fn install() {
    static INSTALL: Once = Once::new();
    INSTALL.call_once(|| {
        // SAFETY: sysconf reads a constant of the system.
        let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
        // SAFETY: an all-zero `sigaction` is a valid value to be
        // overwritten, and a null new action only reads the current one.
        let mut previous: libc::sigaction = unsafe { std::mem::zeroed() };
        // SAFETY: as above; `previous` is a valid place to write to.
        unsafe { libc::sigaction(libc::SIGSEGV, ptr::null(), &mut previous) };
        let installed = Installed {
            previous,
            page: usize::try_from(page).unwrap_or(4096),
        };
        if INSTALLED.set(installed).is_err() {
            return;
        }
        // SAFETY: zeroed as above, then every field the kernel reads is
        // set: the handler, an empty mask and the flags.
        let mut action: libc::sigaction = unsafe { std::mem::zeroed() };
        let handler: extern "C" fn(c_int, *mut siginfo_t, *mut c_void) = on_fault;
        action.sa_sigaction = handler as usize;
        action.sa_flags = libc::SA_SIGINFO | libc::SA_ONSTACK;
        // SAFETY: `sa_mask` is a valid signal set to empty.
        unsafe { libc::sigemptyset(&mut action.sa_mask) };
        // SAFETY: `on_fault` has the signature SA_SIGINFO asks for and is
        // safe to run in a signal handler (module docs). A handler
        // installed by another thread between the read above and this one
        // would be replaced without being passed on to: nothing in weft
        // installs one, and a program that races its own against weft's
        // first fiber keeps the one read above.
        unsafe { libc::sigaction(libc::SIGSEGV, &action, ptr::null_mut()) };
    });
}

/// The handler ([module docs](self)).
extern "C" fn on_fault(signal: c_int, info: *mut siginfo_t, context: *mut c_void) {
    // SAFETY: with SA_SIGINFO the kernel passes a valid `siginfo_t`; its
    // address field is read only for a fault the kernel raised, for which
    // it holds the faulting address.
    let fault_address = unsafe { ((*info).si_code > 0).then(|| (*info).si_addr() as usize) };
    if let Some(address) = fault_address {
        // SAFETY: with SA_SIGINFO the third argument is the interrupted
        // context, a `ucontext_t`.
        let stack_pointer = unsafe { interrupted_stack_pointer(context) };
        if is_overflow(address, stack_pointer) {
            report_overflow_and_abort();
        }
    }
    pass_on(signal, info, context, fault_address.is_some());
}

/// The stack pointer of the code the signal interrupted.
///
/// # Safety
/// `context` must be the third argument of an SA_SIGINFO handler.
#[cfg(target_arch = "x86_64")]
unsafe fn interrupted_stack_pointer(context: *mut c_void) -> usize {
    // SAFETY: forwarded from this function's contract.
    let context = unsafe { &*context.cast::<libc::ucontext_t>() };
    context.uc_mcontext.gregs[libc::REG_RSP as usize] as usize
}

/// The stack pointer of the code the signal interrupted.
///
/// # Safety
/// `context` must be the third argument of an SA_SIGINFO handler.
#[cfg(target_arch = "aarch64")]
unsafe fn interrupted_stack_pointer(context: *mut c_void) -> usize {
    // SAFETY: forwarded from this function's contract.
    let context = unsafe { &*context.cast::<libc::ucontext_t>() };
    context.uc_mcontext.sp as usize
}

/// Whether a fault at `address`, with the stack pointer at
/// `stack_pointer`, is an overflow of the fiber running on this thread:
/// the address is in that fiber's guard page, and near the stack pointer
/// (within [`NEAR_THE_STACK_POINTER`] below it, or within a page above it:
/// a frame of less than a page has no probe, and its first store faults
/// above the stack pointer its prologue moved into the guard page). The
/// thread-local is read only past the second test.
fn is_overflow(address: usize, stack_pointer: usize) -> bool {
    let Some(installed) = INSTALLED.get() else {
        return false;
    };
    let near = stack_pointer.saturating_sub(NEAR_THE_STACK_POINTER)
        ..stack_pointer.saturating_add(installed.page);
    if !near.contains(&address) {
        return false;
    }
    let floor = RUNNING_FLOOR.with(Cell::get);
    floor != 0 && (floor..floor + installed.page).contains(&address)
}

/// Writes the report to standard error and aborts: the thread's name (the
/// kernel's, at most 15 bytes) and id, as the standard library names a
/// thread whose stack overflowed, and the setting that sizes the stack.
fn report_overflow_and_abort() -> ! {
    let mut name = [0u8; 16];
    // SAFETY: PR_GET_NAME writes at most 16 bytes, NUL-terminated, into
    // the buffer.
    let named = unsafe { libc::prctl(libc::PR_GET_NAME, name.as_mut_ptr()) } == 0;
    let len = name.iter().position(|&byte| byte == 0).unwrap_or(0);
    let name: &[u8] = if named { &name[..len] } else { b"<unnamed>" };
    // The system call, not glibc's `gettid` wrapper, which glibc has had
    // only since 2.30.
    // SAFETY: gettid takes no arguments and cannot fail.
    let id = unsafe { libc::syscall(libc::SYS_gettid) };
    let mut digits = [0u8; 20];
    let id = decimal(u64::try_from(id).unwrap_or(0), &mut digits);
    for part in [
        &b"\nthread '"[..],
        name,
        b"' (",
        id,
        b") has overflowed its stack: a task's fiber stack, sized by \
          weft::Builder::stack_size (rayon-core's ThreadPoolBuilder::stack_size \
          through weft's stand-in); aborting\n",
    ] {
        // SAFETY: writes bytes that live for the call; a short or failed
        // write loses part of the report, nothing else.
        unsafe { libc::write(libc::STDERR_FILENO, part.as_ptr().cast(), part.len()) };
    }
    // SAFETY: abort is async-signal-safe and ends the process.
    unsafe { libc::abort() }
}

/// `value` in decimal, written at the end of `buffer` with no allocation.
fn decimal(mut value: u64, buffer: &mut [u8; 20]) -> &[u8] {
    let mut start = buffer.len();
    loop {
        start -= 1;
        buffer[start] = b'0' + (value % 10) as u8;
        value /= 10;
        if value == 0 {
            return &buffer[start..];
        }
    }
}

/// Hands the signal to the action installed before ours (module docs):
/// a handler of the standard library's kind directly, anything else by
/// putting it back for the kernel to apply. `kernel_fault`: the kernel
/// raised the signal for an access, which repeats as the handler returns.
fn pass_on(signal: c_int, info: *mut siginfo_t, context: *mut c_void, kernel_fault: bool) {
    let Some(previous) = INSTALLED.get().map(|installed| installed.previous) else {
        return;
    };
    let handler = previous.sa_sigaction;
    let flags = previous.sa_flags;
    let callable = handler != libc::SIG_DFL
        && handler != libc::SIG_IGN
        && flags & libc::SA_SIGINFO != 0
        && flags & libc::SA_ONSTACK != 0
        && flags & libc::SA_RESETHAND == 0;
    if callable {
        // Under the mask it was installed with, as the kernel would run it
        // (the signal itself is blocked already: ours has no SA_NODEFER).
        // SAFETY: an all-zero signal set is a valid place for the old mask.
        let mut mask: libc::sigset_t = unsafe { std::mem::zeroed() };
        // SAFETY: both sets are valid; blocking more signals is harmless.
        unsafe { libc::pthread_sigmask(libc::SIG_BLOCK, &previous.sa_mask, &mut mask) };
        // SAFETY: installed with SA_SIGINFO, so the address (neither
        // SIG_DFL nor SIG_IGN, checked above) is a function of this
        // signature, called with the kernel's own arguments.
        let handler: extern "C" fn(c_int, *mut siginfo_t, *mut c_void) =
            unsafe { std::mem::transmute(handler as *const ()) };
        handler(signal, info, context);
        // SAFETY: restores the mask read above.
        unsafe { libc::pthread_sigmask(libc::SIG_SETMASK, &mask, ptr::null_mut()) };
        return;
    }
    // SAFETY: `previous` is an action the kernel handed out.
    unsafe { libc::sigaction(signal, &previous, ptr::null_mut()) };
    if !kernel_fault && handler != libc::SIG_IGN {
        // A signal sent with `kill` or `raise` does not repeat: raise it
        // again, pending until this handler returns and then met by the
        // action just put back.
        // SAFETY: raise is async-signal-safe.
        unsafe { libc::raise(signal) };
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn decimal_writes_every_digit() {
        let mut buffer = [0u8; 20];
        assert_eq!(super::decimal(0, &mut buffer), b"0");
        assert_eq!(super::decimal(29_861, &mut buffer), b"29861");
        assert_eq!(
            super::decimal(u64::MAX, &mut buffer),
            u64::MAX.to_string().as_bytes()
        );
    }
}
