//! Reading the caller's arguments (NULL checks, UTF-8, ids) and writing results back: into
//! out-pointers, into caller buffers with the needed size reported, or as strings allocated
//! here and freed by `mysqlleader_string_free`.

use std::ffi::{c_char, CStr, CString};

use super::result::{boundary, mysqlleader_result, FfiResult, Failure};
use crate::config::check_id;

/// `ptr` as a reference, or `MYSQLLEADER_NULL_ARGUMENT` naming `name`.
pub(crate) unsafe fn arg_ref<'a, T>(ptr: *const T, name: &str) -> FfiResult<&'a T> {
    // SAFETY: a non-NULL pointer from C points to a valid T (the conventions).
    unsafe { ptr.as_ref() }.ok_or_else(|| Failure::null(name))
}

/// Fails with `MYSQLLEADER_NULL_ARGUMENT` when an out-pointer is NULL. Checked before any work,
/// so a call never does its work and then fails to report it.
/// A duration in whole milliseconds, as the C structs carry it (saturating).
pub(crate) fn ms(d: std::time::Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX)
}

pub(crate) fn arg_out<T>(ptr: *mut T, name: &str) -> FfiResult<*mut T> {
    if ptr.is_null() {
        Err(Failure::null(name))
    } else {
        Ok(ptr)
    }
}

/// Writes `value` through an out-pointer that was checked with [`arg_out`] (or that may be
/// NULL: then nothing is written).
pub(crate) unsafe fn write_out<T>(ptr: *mut T, value: T) {
    if !ptr.is_null() {
        // SAFETY: the caller passes a pointer to writable memory for a T (the conventions).
        unsafe { ptr.write(value) };
    }
}

/// A NUL-terminated UTF-8 string argument.
pub(crate) unsafe fn arg_str<'a>(ptr: *const c_char, name: &str) -> FfiResult<&'a str> {
    if ptr.is_null() {
        return Err(Failure::null(name));
    }
    // SAFETY: a non-NULL string argument is NUL-terminated (the conventions).
    let bytes = unsafe { CStr::from_ptr(ptr) }.to_bytes();
    std::str::from_utf8(bytes).map_err(|e| {
        Failure::utf8(name, format!("{name} is not valid UTF-8 (invalid byte at offset {})", e.valid_up_to()))
    })
}

/// A service or node id: UTF-8, 1 to 128 characters (checked here, before any round trip).
pub(crate) unsafe fn arg_id<'a>(ptr: *const c_char, name: &str) -> FfiResult<&'a str> {
    // SAFETY: forwarded from the caller.
    let id = unsafe { arg_str(ptr, name) }?;
    check_id(name, id)?;
    Ok(id)
}

/// A lease in milliseconds, within the range the procedures accept.
pub(crate) fn arg_lease_ms(lease_ms: u64, name: &str) -> FfiResult<std::time::Duration> {
    let lease = std::time::Duration::from_millis(lease_ms);
    if lease < crate::config::MIN_LEASE || lease > crate::config::MAX_LEASE {
        return Err(Failure::invalid(name, format!(
            "{name} must be between {} and {} ms, got {lease_ms}",
            crate::config::MIN_LEASE.as_millis(),
            crate::config::MAX_LEASE.as_millis()
        )));
    }
    Ok(lease)
}

/// Copies `text` and a NUL into `buf` (`buf_len` bytes). `needed_out` (may be NULL) receives
/// `text.len() + 1` on success and on `MYSQLLEADER_BUFFER_TOO_SMALL`; nothing is written to `buf`
/// when it is too small. `buf` may be NULL only when `buf_len` is 0.
pub(crate) unsafe fn copy_out(text: &[u8], buf: *mut c_char, buf_len: usize, needed_out: *mut usize) -> FfiResult {
    let needed = text.len() + 1;
    if buf.is_null() && buf_len != 0 {
        return Err(Failure::null("buf"));
    }
    // SAFETY: needed_out is NULL or writable (the conventions).
    unsafe { write_out(needed_out, needed) };
    if buf_len < needed {
        return Err(Failure::new(
            mysqlleader_result::MYSQLLEADER_BUFFER_TOO_SMALL,
            format!("the buffer holds {buf_len} bytes; {needed} are needed (NUL included)"),
        ));
    }
    // SAFETY: buf is writable for buf_len >= needed bytes, and cannot overlap `text`, which
    // the library owns.
    unsafe {
        std::ptr::copy_nonoverlapping(text.as_ptr(), buf.cast::<u8>(), text.len());
        *buf.add(text.len()) = 0;
    }
    Ok(())
}

/// An id as a fixed-size, NUL-terminated field of a result struct; `None` becomes "".
pub(crate) fn id_field(id: Option<&str>) -> FfiResult<[c_char; super::MYSQLLEADER_ID_BUFFER_SIZE]> {
    let mut field = [0 as c_char; super::MYSQLLEADER_ID_BUFFER_SIZE];
    let bytes = id.unwrap_or("").as_bytes();
    if bytes.len() >= field.len() {
        // The tables hold at most 512 bytes per id, so this is a server out of contract.
        return Err(Failure::new(
            mysqlleader_result::MYSQLLEADER_SERVER,
            format!("the server returned an id of {} bytes; at most 512 are expected", bytes.len()),
        ));
    }
    for (dst, src) in field.iter_mut().zip(bytes) {
        *dst = *src as c_char;
    }
    Ok(field)
}

/// A string for C, allocated by the library: free it with `mysqlleader_string_free`.
pub(crate) fn owned_string(text: String) -> *mut c_char {
    // Text made by the library holds no NUL; should one appear, it is escaped, not truncated.
    CString::new(text).unwrap_or_else(|e| {
        let text = String::from_utf8_lossy(&e.into_vec()).replace('\0', "\\0");
        CString::new(text).expect("no NUL left")
    })
    .into_raw()
}

/// Frees a string that the library allocated and handed to the caller (e.g. by
/// `mysqlleader_install_sql`). `mysqlleader_string_free(NULL)` does nothing. Never pass a string
/// that the library did not allocate, or the borrowed pointer of `mysqlleader_last_error`.
#[no_mangle]
pub unsafe extern "C" fn mysqlleader_string_free(s: *mut c_char) {
    if s.is_null() {
        return;
    }
    super::result::boundary_void(|| {
        // SAFETY: `s` came from CString::into_raw in `owned_string` (the conventions).
        drop(unsafe { CString::from_raw(s) });
    });
}

/// Copies the node id an elector uses when its configuration gives none — `hostname:pid`,
/// at most 128 characters — into `buf` (see `mysqlleader_last_error_copy` for `buf`,
/// `buf_len` and `needed_out`, which may be NULL).
#[no_mangle]
pub unsafe extern "C" fn mysqlleader_default_node_id(buf: *mut c_char, buf_len: usize, needed_out: *mut usize) -> mysqlleader_result {
    boundary(|| {
        let id = crate::config::default_node_id();
        // SAFETY: forwarded from the caller.
        unsafe { copy_out(id.as_bytes(), buf, buf_len, needed_out) }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn copy_out_reports_the_needed_size() {
        let mut buf = [1 as c_char; 4];
        let mut needed = 0usize;
        let e = unsafe { copy_out(b"abcd", buf.as_mut_ptr(), buf.len(), &mut needed) }.unwrap_err();
        assert_eq!(e.code, mysqlleader_result::MYSQLLEADER_BUFFER_TOO_SMALL);
        assert_eq!(needed, 5);
        assert_eq!(buf, [1; 4], "nothing written when too small");
        unsafe { copy_out(b"abc", buf.as_mut_ptr(), buf.len(), &mut needed) }.unwrap();
        assert_eq!(needed, 4);
        assert_eq!(unsafe { CStr::from_ptr(buf.as_ptr()) }.to_bytes(), b"abc");
        unsafe { copy_out(b"abc", std::ptr::null_mut(), 0, &mut needed) }.unwrap_err();
        assert_eq!(needed, 4);
        assert_eq!(unsafe { copy_out(b"", std::ptr::null_mut(), 3, &mut needed) }.unwrap_err().code,
                   mysqlleader_result::MYSQLLEADER_NULL_ARGUMENT);
    }

    #[test]
    fn string_arguments_are_checked() {
        let bad = [0xffu8, 0x41, 0];
        let e = unsafe { arg_str(bad.as_ptr().cast(), "service_id") }.unwrap_err();
        assert_eq!(e.code, mysqlleader_result::MYSQLLEADER_INVALID_UTF8);
        let long = CString::new("x".repeat(129)).unwrap();
        let e = unsafe { arg_id(long.as_ptr(), "node_id") }.unwrap_err();
        assert_eq!(e.code, mysqlleader_result::MYSQLLEADER_INVALID_ARGUMENT);
        assert!(e.message.contains("node_id"));
        assert_eq!(unsafe { arg_id(std::ptr::null(), "node_id") }.unwrap_err().code,
                   mysqlleader_result::MYSQLLEADER_NULL_ARGUMENT);
        assert!(arg_lease_ms(0, "lease_ms").is_err());
        assert!(arg_lease_ms(86_400_001, "lease_ms").is_err());
        assert_eq!(arg_lease_ms(86_400_000, "lease_ms").unwrap().as_millis(), 86_400_000);
    }
}
