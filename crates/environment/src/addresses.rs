//! This host's IPv4 addresses, from getifaddrs(3): in this process's network namespace.

/// (interface, address) of every IPv4 address that is up and not loopback, in the kernel's order.
pub fn ipv4_addresses() -> Vec<(String, std::net::Ipv4Addr)> {
    let mut found = Vec::new();
    let mut list: *mut libc::ifaddrs = std::ptr::null_mut();
    // SAFETY: getifaddrs fills `list` with a chain we only read and then free with freeifaddrs.
    if unsafe { libc::getifaddrs(&mut list) } != 0 {
        return found;
    }
    let mut at = list;
    while !at.is_null() {
        // SAFETY: `at` is a node of the chain getifaddrs made, not yet freed.
        let ifa = unsafe { &*at };
        let up = ifa.ifa_flags & libc::IFF_UP as u32 != 0 && ifa.ifa_flags & libc::IFF_LOOPBACK as u32 == 0;
        // SAFETY: ifa_addr, when set, points at a sockaddr whose family says its type.
        if up && !ifa.ifa_addr.is_null() && i32::from(unsafe { (*ifa.ifa_addr).sa_family }) == libc::AF_INET {
            // SAFETY: an AF_INET address is a sockaddr_in; ifa_name is a C string.
            #[allow(
                clippy::cast_ptr_alignment,
                reason = "getifaddrs allocates each address as the type its family names, aligned for it"
            )]
            let (sin, name) =
                unsafe { (&*(ifa.ifa_addr as *const libc::sockaddr_in), std::ffi::CStr::from_ptr(ifa.ifa_name)) };
            found.push((
                name.to_string_lossy().into_owned(),
                std::net::Ipv4Addr::from(u32::from_be(sin.sin_addr.s_addr)),
            ));
        }
        at = ifa.ifa_next;
    }
    // SAFETY: the chain getifaddrs gave, freed once.
    unsafe { libc::freeifaddrs(list) };
    found
}
