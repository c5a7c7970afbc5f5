//! One client host as a run's rank sees it: CPU, RAM, kernel, the file system of the run's
//! working folder there, and the network interface that carries its traffic (name, speed, MTU,
//! driver, and the rate a `tc` token bucket shapes it to).
//!
//! The interface's facts come from the kernel through this process's own network namespace
//! (`/proc/self/net/route`, ioctls on a socket, `tc`), never from `/sys/class/net`: sysfs shows
//! the devices of the namespace that mounted it, and a rank started by `nsenter --net` (the
//! lab's hosts) would read the root namespace's devices there, or none.

use serde::{Deserialize, Serialize};
use std::net::Ipv4Addr;
use std::path::Path;

/// What one rank records of its host.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HostEnvironment {
    /// `uname` release.
    pub kernel: String,
    /// The first "model name" in `/proc/cpuinfo`, or "unknown".
    pub cpu_model: String,
    /// The host's online CPUs (`sysconf(_SC_NPROCESSORS_ONLN)`), not the ones mpirun bound this
    /// rank to; 0 if unknown.
    pub cpu_count: usize,
    /// MemTotal in bytes, 0 if unreadable.
    pub ram_bytes: u64,
    /// The run's working folder as this host reaches it.
    #[serde(default)]
    pub folder: Option<FolderFacts>,
    /// The interface whose route leads to the run's server or, without one, to the other ranks.
    #[serde(default)]
    pub nic: Option<Nic>,
}

/// The file system of the folder a rank works in.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FolderFacts {
    /// The folder's path here, or the server's URL.
    pub path: String,
    /// e.g. "ext4", "fuse.sshfs", or the protocol client ("nfs3 (iomatrix client)").
    pub fs_type: String,
    /// e.g. "/dev/loop0", or the server.
    pub mount_source: String,
}

/// A network interface and what shapes it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Nic {
    /// e.g. "eth0", "iomx-7-c2".
    pub name: String,
    /// The address whose route chose this interface.
    pub toward: String,
    /// The link speed the driver reports (ETHTOOL_GSET), in Mbit/s; None where it reports none.
    pub speed_mbps: Option<u64>,
    /// SIOCGIFMTU; None if unreadable.
    pub mtu: Option<u32>,
    /// ETHTOOL_GDRVINFO's driver (e.g. "virtio_net", "veth"), or "unknown".
    pub driver: String,
    /// The rate of a tbf qdisc on the interface (`tc qdisc show`), e.g. "100Mbit"; "not shaped"
    /// where none; "unknown (...)" where `tc` could not be asked. A qdisc shapes what leaves an
    /// interface: this is the rate the host sends at.
    pub link_rate: String,
    /// The rate the host receives at, where whoever shaped the link said (the lab: its bridge's
    /// end of the host's veth, which no rank sees from its own namespace); None where nobody did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub receive_rate: Option<String>,
}

/// [`Nic::link_rate`] of an interface without a token bucket.
pub const NOT_SHAPED: &str = "not shaped";

/// This host's facts: `folder` is the run's working folder here (None on a server, where
/// `remote` names the URL, protocol and server instead), `toward` the address whose route picks
/// the interface.
pub fn capture_host(folder: Option<&Path>, remote: Option<FolderFacts>, toward: Option<Ipv4Addr>) -> HostEnvironment {
    let machine = crate::machine::read();
    let folder = remote.or_else(|| {
        let folder = folder?;
        let info = crate::target_info(folder).ok()?;
        Some(FolderFacts { path: info.path, fs_type: info.fs_type, mount_source: info.mount_source })
    });
    HostEnvironment {
        kernel: machine.kernel,
        cpu_model: machine.cpu_model,
        // SAFETY: sysconf reads a system value; no memory is involved.
        cpu_count: usize::try_from(unsafe { libc::sysconf(libc::_SC_NPROCESSORS_ONLN) }).unwrap_or(0),
        ram_bytes: machine.ram_bytes,
        folder,
        nic: toward.and_then(nic_toward),
    }
}

/// The interface the kernel routes `to` through, with its facts.
pub fn nic_toward(to: Ipv4Addr) -> Option<Nic> {
    let name = if to.is_loopback() {
        "lo".to_string()
    } else {
        let routes = std::fs::read_to_string("/proc/self/net/route").ok()?;
        route_interface(&routes, to).or_else(|| interface_holding(to))?
    };
    Some(Nic {
        speed_mbps: ethtool::speed_mbps(&name),
        mtu: ethtool::mtu(&name),
        driver: ethtool::driver(&name).unwrap_or_else(|| "unknown".into()),
        link_rate: link_rate(&name),
        receive_rate: None,
        toward: to.to_string(),
        name,
    })
}

/// An address of this host's own: the route table routes it through `lo` in its local table,
/// which /proc/net/route does not show, so the interface holding it is named.
fn interface_holding(addr: Ipv4Addr) -> Option<String> {
    crate::addresses::ipv4_addresses().into_iter().find(|(_, a)| *a == addr).map(|(name, _)| name)
}

/// The interface of the longest-prefix route to `to` in `/proc/net/route`'s text (the main
/// table; ties go to the lower metric).
pub(crate) fn route_interface(text: &str, to: Ipv4Addr) -> Option<String> {
    let to = u32::from(to);
    let mut best: Option<(u32, u32, String)> = None;
    for line in text.lines().skip(1) {
        let f: Vec<&str> = line.split_whitespace().collect();
        if f.len() < 8 {
            continue;
        }
        // The kernel prints the network-order address and mask as a native u32 in hex: on
        // little-endian machines 0100A8C0 is 192.168.0.1.
        let hex = |s: &str| u32::from_str_radix(s, 16).ok().map(|v| u32::from_be_bytes(v.to_ne_bytes()));
        let (Some(dest), Some(mask), Ok(flags), Ok(metric)) =
            (hex(f[1]), hex(f[7]), u32::from_str_radix(f[3], 16), f[6].parse::<u32>())
        else {
            continue;
        };
        let up = flags & 1 != 0;
        if !up || to & mask != dest & mask {
            continue;
        }
        let better = match &best {
            None => true,
            Some((m, met, _)) => mask.count_ones() > m.count_ones() || (mask == *m && metric < *met),
        };
        if better {
            best = Some((mask, metric, f[0].to_string()));
        }
    }
    best.map(|(_, _, name)| name)
}

/// The tbf rate on `name` from `tc -j qdisc show dev NAME` ("100Mbit"), or [`NOT_SHAPED`].
fn link_rate(name: &str) -> String {
    let Some(tc) = ["/usr/sbin/tc", "/sbin/tc", "/usr/bin/tc", "/bin/tc"].into_iter().find(|p| Path::new(p).exists())
    else {
        return "unknown (no tc here: apt-get install iproute2)".into();
    };
    match std::process::Command::new(tc).args(["-j", "qdisc", "show", "dev", name]).output() {
        Ok(out) if out.status.success() => tbf_rate(&String::from_utf8_lossy(&out.stdout))
            .unwrap_or_else(|| "unknown (tc's qdisc list did not read)".into()),
        Ok(out) => format!("unknown (tc: {})", String::from_utf8_lossy(&out.stderr).trim()),
        Err(e) => format!("unknown (tc: {e})"),
    }
}

/// The rate of the first tbf in `tc -j qdisc show`'s JSON, in tc's own words (bytes per second
/// times 8, in Kbit, Mbit or Gbit where whole); [`NOT_SHAPED`] where there is none. None: not JSON.
pub(crate) fn tbf_rate(json: &str) -> Option<String> {
    let qdiscs: Vec<serde_json::Value> = serde_json::from_str(json.trim()).ok()?;
    let Some(rate) = qdiscs.iter().find(|q| q["kind"] == "tbf").and_then(|q| q["options"]["rate"].as_u64()) else {
        return Some(NOT_SHAPED.into());
    };
    Some(bit_rate(rate.saturating_mul(8)))
}

/// 100000000 -> "100Mbit"; a rate that is no whole number of a unit stays in bits.
fn bit_rate(bits: u64) -> String {
    for (unit, size) in [("Gbit", 1_000_000_000), ("Mbit", 1_000_000), ("Kbit", 1_000)] {
        if bits >= size && bits % size == 0 {
            return format!("{}{unit}", bits / size);
        }
    }
    format!("{bits}bit")
}

/// The interface ioctls: netns-aware, as sysfs is not.
mod ethtool {
    use std::os::fd::AsRawFd;

    const ETHTOOL_GSET: u32 = 0x1;
    const ETHTOOL_GDRVINFO: u32 = 0x3;
    const SPEED_UNKNOWN: u32 = u32::MAX;

    /// `struct ethtool_cmd` of linux/ethtool.h (the legacy GSET, which every driver still answers).
    #[repr(C)]
    #[derive(Default)]
    struct EthtoolCmd {
        cmd: u32,
        supported: u32,
        advertising: u32,
        speed: u16,
        duplex: u8,
        port: u8,
        phy_address: u8,
        transceiver: u8,
        autoneg: u8,
        mdio_support: u8,
        maxtxpkt: u32,
        maxrxpkt: u32,
        speed_hi: u16,
        eth_tp_mdix: u8,
        eth_tp_mdix_ctrl: u8,
        lp_advertising: u32,
        reserved: [u32; 2],
    }

    /// `struct ethtool_drvinfo` of linux/ethtool.h.
    #[repr(C)]
    struct EthtoolDrvinfo {
        cmd: u32,
        driver: [u8; 32],
        version: [u8; 32],
        fw_version: [u8; 32],
        bus_info: [u8; 32],
        erom_version: [u8; 32],
        reserved2: [u8; 12],
        n_priv_flags: u32,
        n_stats: u32,
        testinfo_len: u32,
        eedump_len: u32,
        regdump_len: u32,
    }

    /// An `ifreq` naming `name`, or None for a name the kernel could not hold.
    fn ifreq(name: &str) -> Option<libc::ifreq> {
        // SAFETY: ifreq is plain old data; all zeroes is a valid value of it.
        let mut req: libc::ifreq = unsafe { std::mem::zeroed() };
        let bytes = name.as_bytes();
        if bytes.is_empty() || bytes.len() >= req.ifr_name.len() || bytes.contains(&0) {
            return None;
        }
        for (to, from) in req.ifr_name.iter_mut().zip(bytes) {
            *to = *from as libc::c_char;
        }
        Some(req)
    }

    fn socket() -> Option<std::net::UdpSocket> {
        // Any socket of this network namespace answers for its interfaces.
        std::net::UdpSocket::bind("0.0.0.0:0").ok()
    }

    /// SIOCETHTOOL with `data` (an ethtool command struct) on `name`.
    ///
    /// SAFETY contract for callers: `T` is one of the `#[repr(C)]` ethtool structs above, whose
    /// first field is the command the kernel reads to know the struct's size.
    unsafe fn ethtool<T>(name: &str, data: &mut T) -> bool {
        let (Some(mut req), Some(sock)) = (ifreq(name), socket()) else { return false };
        req.ifr_ifru.ifru_data = std::ptr::from_mut::<T>(data).cast();
        // SAFETY: `req` names the interface and points at `data`, a struct of the size the
        // command in its first field implies (the caller's contract); both outlive the call.
        unsafe { libc::ioctl(sock.as_raw_fd(), libc::SIOCETHTOOL, &mut req) == 0 }
    }

    pub(super) fn speed_mbps(name: &str) -> Option<u64> {
        let mut cmd = EthtoolCmd { cmd: ETHTOOL_GSET, ..Default::default() };
        // SAFETY: an EthtoolCmd with ETHTOOL_GSET, as ethtool's contract asks.
        if !unsafe { ethtool(name, &mut cmd) } {
            return None;
        }
        let speed = u32::from(cmd.speed) | (u32::from(cmd.speed_hi) << 16);
        (speed != 0 && speed != SPEED_UNKNOWN && speed != u32::from(u16::MAX)).then_some(u64::from(speed))
    }

    pub(super) fn driver(name: &str) -> Option<String> {
        // SAFETY: the struct is plain old data; all zeroes is a valid value of it.
        let mut info: EthtoolDrvinfo = unsafe { std::mem::zeroed() };
        info.cmd = ETHTOOL_GDRVINFO;
        // SAFETY: an EthtoolDrvinfo with ETHTOOL_GDRVINFO, as ethtool's contract asks.
        if !unsafe { ethtool(name, &mut info) } {
            return None;
        }
        let end = info.driver.iter().position(|b| *b == 0).unwrap_or(info.driver.len());
        let driver = String::from_utf8_lossy(&info.driver[..end]).into_owned();
        (!driver.is_empty()).then_some(driver)
    }

    pub(super) fn mtu(name: &str) -> Option<u32> {
        let (mut req, sock) = (ifreq(name)?, socket()?);
        // SAFETY: SIOCGIFMTU reads the name and writes ifru_mtu of `req`, which outlives the call.
        if unsafe { libc::ioctl(sock.as_raw_fd(), libc::SIOCGIFMTU, &mut req) } != 0 {
            return None;
        }
        // SAFETY: the ioctl above filled the union's mtu member.
        u32::try_from(unsafe { req.ifr_ifru.ifru_mtu }).ok()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const ROUTES: &str = "Iface\tDestination\tGateway \tFlags\tRefCnt\tUse\tMetric\tMask\t\tMTU\tWindow\tIRTT\n\
        eth0\t00000000\t0100A8C0\t0003\t0\t0\t100\t00000000\t0\t0\t0\n\
        eth0\t0000A8C0\t00000000\t0001\t0\t0\t100\t00FFFFFF\t0\t0\t0\n\
        lab0\t00D50A0A\t00000000\t0001\t0\t0\t0\t00FFFFFF\t0\t0\t0\n\
        down0\t07D50A0A\t00000000\t0000\t0\t0\t0\tFFFFFFFF\t0\t0\t0\n";

    #[test]
    fn the_longest_matching_up_route_names_the_interface() {
        let at = |a: &str| route_interface(ROUTES, a.parse().unwrap());
        assert_eq!(at("10.10.213.7").as_deref(), Some("lab0"), "the /24 beats the default; a down route is not taken");
        assert_eq!(at("192.168.0.9").as_deref(), Some("eth0"));
        assert_eq!(at("8.8.8.8").as_deref(), Some("eth0"), "the default route");
        assert_eq!(route_interface("Iface\tDestination\n", "8.8.8.8".parse().unwrap()), None);
    }

    #[test]
    fn a_tbf_rate_is_read_from_tcs_json_and_its_absence_said() {
        let tbf = r#"[{"kind":"tbf","handle":"8001:","root":true,"refcnt":2,"options":{"rate":12500000,"burst":5120,"lat":50000}}]"#;
        assert_eq!(tbf_rate(tbf).as_deref(), Some("100Mbit"));
        assert_eq!(tbf_rate(r#"[{"kind":"tbf","options":{"rate":1250000}}]"#).as_deref(), Some("10Mbit"));
        assert_eq!(tbf_rate(r#"[{"kind":"tbf","options":{"rate":125000000}}]"#).as_deref(), Some("1Gbit"));
        assert_eq!(
            tbf_rate(r#"[{"kind":"noqueue","handle":"0:","root":true,"refcnt":2,"options":{}}]"#).as_deref(),
            Some(NOT_SHAPED)
        );
        assert_eq!(tbf_rate("[]").as_deref(), Some(NOT_SHAPED));
        assert_eq!(tbf_rate("qdisc noqueue 0: root"), None);
        assert_eq!(bit_rate(1_500_000), "1500Kbit");
        assert_eq!(bit_rate(999), "999bit");
    }

    #[test]
    fn loopback_is_described_from_the_kernel() {
        let nic = nic_toward(Ipv4Addr::LOCALHOST).expect("lo");
        assert_eq!(nic.name, "lo");
        assert_eq!(nic.mtu.map(|m| m > 0), Some(true), "{nic:?}");
    }

    #[test]
    fn this_host_is_described_with_its_folder() {
        let dir = std::env::temp_dir();
        let h = capture_host(Some(&dir), None, None);
        assert!(h.cpu_count >= 1 && h.ram_bytes > 0, "{h:?}");
        assert!(h.folder.is_some_and(|f| !f.fs_type.is_empty()));
        assert!(h.nic.is_none());
    }
}
