"""Schemas of The group coordinator's APIs: classic groups, committed offsets, and KIP-848 consumer groups.

Written down from Kafka's message JSON specs in the language of
franz/protocol/schema.py; versions start at Kafka 4.x's baseline (KIP-896).
"""

SCHEMAS = """\
FindCoordinator key=10 versions=0-6 flex=3+
 request
    key string 0-3
    key_type int8 1+
    coordinator_keys []string 4+
 response
    throttle_time_ms int32 1+
    error_code int16 0-3
    error_message string 1-3 null
    node_id int32 0-3
    host string 0-3
    port int32 0-3
    coordinators [] 4+
      key string 4+
      node_id int32 4+
      host string 4+
      port int32 4+
      error_code int16 4+
      error_message string 4+ null

JoinGroup key=11 versions=0-9 flex=6+
 request
    group_id string
    session_timeout_ms int32
    rebalance_timeout_ms int32 1+ default=-1
    member_id string
    group_instance_id string 5+ null default=null
    protocol_type string
    protocols []
      name string
      metadata bytes
    reason string 8+ null default=null
 response
    throttle_time_ms int32 2+
    error_code int16
    generation_id int32 default=-1
    protocol_type string 7+ null default=null
    protocol_name string null=7+
    leader string
    skip_assignment bool 9+
    member_id string
    members []
      member_id string
      group_instance_id string 5+ null default=null
      metadata bytes

SyncGroup key=14 versions=0-5 flex=4+
 request
    group_id string
    generation_id int32
    member_id string
    group_instance_id string 3+ null default=null
    protocol_type string 5+ null default=null
    protocol_name string 5+ null default=null
    assignments []
      member_id string
      assignment bytes
 response
    throttle_time_ms int32 1+
    error_code int16
    protocol_type string 5+ null default=null
    protocol_name string 5+ null default=null
    assignment bytes

Heartbeat key=12 versions=0-4 flex=4+
 request
    group_id string
    generation_id int32
    member_id string
    group_instance_id string 3+ null default=null
 response
    throttle_time_ms int32 1+
    error_code int16

LeaveGroup key=13 versions=0-5 flex=4+
 request
    group_id string
    member_id string 0-2
    members [] 3+
      member_id string 3+
      group_instance_id string 3+ null default=null
      reason string 5+ null default=null
 response
    throttle_time_ms int32 1+
    error_code int16
    members [] 3+
      member_id string 3+
      group_instance_id string 3+ null
      error_code int16 3+

OffsetCommit key=8 versions=2-10 flex=8+
 request
    group_id string
    generation_id_or_member_epoch int32 default=-1
    member_id string
    group_instance_id string 7+ null default=null
    retention_time_ms int64 2-4 default=-1
    topics []
      name string 2-9
      topic_id uuid 10+
      partitions []
        partition_index int32
        committed_offset int64
        committed_leader_epoch int32 6+ default=-1
        committed_metadata string null
 response
    throttle_time_ms int32 3+
    topics []
      name string 2-9
      topic_id uuid 10+
      partitions []
        partition_index int32
        error_code int16

OffsetFetch key=9 versions=1-10 flex=6+
 request
    group_id string 1-7
    topics [] 1-7 null=2-7
      name string 1-7
      partition_indexes []int32 1-7
    groups [] 8+
      group_id string 8+
      member_id string 9+ null default=null
      member_epoch int32 9+ default=-1
      topics [] 8+ null
        name string 8-9
        topic_id uuid 10+
        partition_indexes []int32 8+
    require_stable bool 7+
 response
    throttle_time_ms int32 3+
    topics [] 1-7
      name string 1-7
      partitions [] 1-7
        partition_index int32 1-7
        committed_offset int64 1-7
        committed_leader_epoch int32 5-7 default=-1
        metadata string 1-7 null
        error_code int16 1-7
    error_code int16 2-7
    groups [] 8+
      group_id string 8+
      topics [] 8+
        name string 8-9
        topic_id uuid 10+
        partitions [] 8+
          partition_index int32 8+
          committed_offset int64 8+
          committed_leader_epoch int32 8+ default=-1
          metadata string 8+ null
          error_code int16 8+
      error_code int16 8+

ListGroups key=16 versions=0-5 flex=3+
 request
    states_filter []string 4+
    types_filter []string 5+
 response
    throttle_time_ms int32 1+
    error_code int16
    groups []
      group_id string
      protocol_type string
      group_state string 4+
      group_type string 5+

DescribeGroups key=15 versions=0-6 flex=5+
 request
    groups []string
    include_authorized_operations bool 3+
 response
    throttle_time_ms int32 1+
    groups []
      error_code int16
      error_message string 6+ null default=null
      group_id string
      group_state string
      protocol_type string
      protocol_data string
      members []
        member_id string
        group_instance_id string 4+ null default=null
        client_id string
        client_host string
        member_metadata bytes
        member_assignment bytes
      authorized_operations int32 3+ default=-2147483648

DeleteGroups key=42 versions=0-2 flex=2+
 request
    groups_names []string
 response
    throttle_time_ms int32
    results []
      group_id string
      error_code int16

OffsetDelete key=47 versions=0-0
 request
    group_id string
    topics []
      name string
      partitions []
        partition_index int32
 response
    error_code int16
    throttle_time_ms int32
    topics []
      name string
      partitions []
        partition_index int32
        error_code int16

ConsumerGroupHeartbeat key=68 versions=0-1 flex=0+
 request
    group_id string
    member_id string
    member_epoch int32
    instance_id string null default=null
    rack_id string null default=null
    rebalance_timeout_ms int32 default=-1
    subscribed_topic_names []string null default=null
    subscribed_topic_regex string 1+ null default=null
    server_assignor string null default=null
    topic_partitions [] null default=null
      topic_id uuid
      partitions []int32
 response
    throttle_time_ms int32
    error_code int16
    error_message string null default=null
    member_id string null default=null
    member_epoch int32
    heartbeat_interval_ms int32
    assignment {} null default=null
      topic_partitions []
        topic_id uuid
        partitions []int32

ConsumerGroupDescribe key=69 versions=0-1 flex=0+
 request
    group_ids []string
    include_authorized_operations bool
 response
    throttle_time_ms int32
    groups []
      error_code int16
      error_message string null default=null
      group_id string
      group_state string
      group_epoch int32
      assignment_epoch int32
      assignor_name string
      members []
        member_id string
        instance_id string null default=null
        rack_id string null default=null
        member_epoch int32
        client_id string
        client_host string
        subscribed_topic_names []string
        subscribed_topic_regex string null default=null
        assignment {}
          topic_partitions []
            topic_id uuid
            topic_name string
            partitions []int32
        target_assignment {}
          topic_partitions []
            topic_id uuid
            topic_name string
            partitions []int32
        member_type int8 1+ default=-1
      authorized_operations int32 default=-2147483648
"""
