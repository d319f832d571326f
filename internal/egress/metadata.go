package egress

import "net/netip"

// cloudAddress is an address where a cloud serves an instance its metadata
// or credentials, or runs its platform agent, and where the cloud says so.
type cloudAddress struct {
	addr   netip.Addr
	what   string // what the address is, in a refusal
	source string // the cloud's documentation of it
}

// metadataAddresses are the cloud metadata, credential and platform
// addresses, IPv4 and IPv6 alike: each is refused under every option,
// ahead of the range it falls in (link-local, fc00::/7, 100.64/10 or a
// public one), and so is every IPv4-mapped, NAT64 and 6to4 spelling of an
// IPv4 one. An IPv4 address in 169.254/16 is link-local and refused anyway;
// it is listed for the table to be whole.
var metadataAddresses = []cloudAddress{
	{netip.MustParseAddr("169.254.169.254"), "the metadata address of AWS, GCP, Azure, OCI, OpenStack and others",
		"https://docs.aws.amazon.com/AWSEC2/latest/UserGuide/instancedata-data-retrieval.html"},
	{netip.MustParseAddr("fd00:ec2::254"), "the IPv6 metadata address of AWS",
		"https://docs.aws.amazon.com/AWSEC2/latest/UserGuide/instancedata-data-retrieval.html"},
	{netip.MustParseAddr("169.254.170.2"), "the task metadata and credentials address of AWS ECS",
		"https://docs.aws.amazon.com/AmazonECS/latest/developerguide/task-iam-roles.html"},
	{netip.MustParseAddr("169.254.170.23"), "the EKS Pod Identity agent address of AWS",
		"https://docs.aws.amazon.com/eks/latest/userguide/pod-id-agent-setup.html"},
	{netip.MustParseAddr("fd00:ec2::23"), "the IPv6 EKS Pod Identity agent address of AWS",
		"https://docs.aws.amazon.com/eks/latest/userguide/pod-id-agent-setup.html"},
	{netip.MustParseAddr("fd20:ce::254"), "the IPv6 metadata address of GCP",
		"https://cloud.google.com/compute/docs/metadata/querying-metadata"},
	{netip.MustParseAddr("168.63.129.16"), "the platform address of Azure (WireServer)",
		"https://learn.microsoft.com/en-us/azure/virtual-network/what-is-ip-address-168-63-129-16"},
	{netip.MustParseAddr("192.0.0.192"), "the legacy metadata address of OCI",
		"https://docs.oracle.com/en-us/iaas/Content/Compute/Tasks/gettingmetadata.htm"},
	{netip.MustParseAddr("fd00:c1::a9fe:a9fe"), "the IPv6 metadata address of OCI",
		"https://docs.oracle.com/en-us/iaas/Content/Compute/Tasks/gettingmetadata.htm"},
	{netip.MustParseAddr("100.100.100.200"), "the metadata address of Alibaba Cloud",
		"https://www.alibabacloud.com/help/en/ecs/user-guide/view-instance-metadata"},
	{netip.MustParseAddr("169.254.42.42"), "the metadata address of Scaleway",
		"https://www.scaleway.com/en/developers/api/instance/user-data"},
	{netip.MustParseAddr("fd00:42::42"), "the IPv6 metadata address of Scaleway",
		"https://www.scaleway.com/en/developers/api/instance/user-data"},
	{netip.MustParseAddr("169.254.0.23"), "the metadata address of Tencent Cloud",
		"https://www.tencentcloud.com/document/product/213/4934"},
	{netip.MustParseAddr("fe80::a9fe:a9fe"), "the IPv6 metadata address of OpenStack",
		"https://specs.openstack.org/openstack/neutron-specs/specs/ussuri/metadata-add-ipv6-support.html"},
}

// metadataRules are metadataAddresses as rules of class never.
func metadataRules() []rule {
	rs := make([]rule, 0, len(metadataAddresses))
	for _, m := range metadataAddresses {
		rs = append(rs, rule{netip.PrefixFrom(m.addr, m.addr.BitLen()), never, m.what})
	}
	return rs
}
