//! Compatibility fingerprint: changes whenever anything that changes what the
//! provider would allow changes (servers, transports, exact tool policies,
//! global policy), and never because of declaration order, serialization or
//! secret values.

use serde_json::{json, Value};

use crate::spec::{GlobalPolicy, ServerSet};

/// Canonical JSON: `ServerSet` iterates sorted, tool maps are sorted, and
/// serde_json's default map is ordered, so equal sets give equal text.
pub fn canonical(set: &ServerSet, global: GlobalPolicy) -> Value {
    let servers: Vec<Value> = set
        .servers()
        .map(|s| json!({"name": s.name, "transport": s.transport, "tools": s.tools}))
        .collect();
    json!({"v": 1, "global": global, "servers": servers})
}

/// `fp1-` + 128-bit FNV-1a of the canonical JSON, in hex. Not a security
/// hash: it guards reuse of a running provider, not against an adversary.
pub fn fingerprint(set: &ServerSet, global: GlobalPolicy) -> String {
    format!("fp1-{:032x}", fnv1a_128(canonical(set, global).to_string().as_bytes()))
}

fn fnv1a_128(bytes: &[u8]) -> u128 {
    const OFFSET: u128 = 0x6c62272e07bb014262b821756295c58d;
    const PRIME: u128 = 0x0000000001000000000000000000013B;
    bytes.iter().fold(OFFSET, |h, &b| (h ^ b as u128).wrapping_mul(PRIME))
}
