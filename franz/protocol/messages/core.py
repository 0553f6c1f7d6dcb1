"""Schemas of Produce, Fetch, ListOffsets, Metadata, DescribeTopicPartitions, OffsetForLeaderEpoch and
ApiVersions: the data path and discovery.

Written down from Kafka's message JSON specs in the language of
franz/protocol/schema.py; versions start at Kafka 4.x's baseline (KIP-896).
"""

SCHEMAS = """\
Produce key=0 versions=3-13 flex=9+
 request
    transactional_id string null default=null
    acks int16
    timeout_ms int32
    topic_data []
      name string 3-12
      topic_id uuid 13+
      partition_data []
        index int32
        records records null
 response
    responses []
      name string 3-12
      topic_id uuid 13+
      partition_responses []
        index int32
        error_code int16
        base_offset int64
        log_append_time_ms int64 default=-1
        log_start_offset int64 5+ default=-1
        record_errors [] 8+
          batch_index int32 8+
          batch_index_error_message string 8+ null default=null
        error_message string 8+ null default=null
        current_leader {} 10+ tag=0
          leader_id int32 10+ default=-1
          leader_epoch int32 10+ default=-1
    throttle_time_ms int32
    node_endpoints [] 10+ tag=0
      node_id int32 10+
      host string 10+
      port int32 10+
      rack string 10+ null default=null

Fetch key=1 versions=4-18 flex=12+
 request
    cluster_id string 12+ null tag=0 default=null
    replica_id int32 4-14 default=-1
    replica_state {} 15+ tag=1
      replica_id int32 15+ default=-1
      replica_epoch int64 15+ default=-1
    max_wait_ms int32
    min_bytes int32
    max_bytes int32 default=0x7fffffff
    isolation_level int8
    session_id int32 7+
    session_epoch int32 7+ default=-1
    topics []
      topic string 4-12
      topic_id uuid 13+
      partitions []
        partition int32
        current_leader_epoch int32 9+ default=-1
        fetch_offset int64
        last_fetched_epoch int32 12+ default=-1
        log_start_offset int64 5+ default=-1
        partition_max_bytes int32
        replica_directory_id uuid 17+ tag=0
        high_watermark int64 18+ tag=1 default=0x7fffffffffffffff
    forgotten_topics_data [] 7+
      topic string 7-12
      topic_id uuid 13+
      partitions []int32 7+
    rack_id string 11+
 response
    throttle_time_ms int32
    error_code int16 7+
    session_id int32 7+
    responses []
      topic string 4-12
      topic_id uuid 13+
      partitions []
        partition_index int32
        error_code int16
        high_watermark int64
        last_stable_offset int64 default=-1
        log_start_offset int64 5+ default=-1
        diverging_epoch {} 12+ tag=0
          epoch int32 12+ default=-1
          end_offset int64 12+ default=-1
        current_leader {} 12+ tag=1
          leader_id int32 12+ default=-1
          leader_epoch int32 12+ default=-1
        snapshot_id {} 12+ tag=2
          end_offset int64 default=-1
          epoch int32 default=-1
        aborted_transactions [] null
          producer_id int64
          first_offset int64
        preferred_read_replica int32 11+ default=-1
        records records null
    node_endpoints [] 16+ tag=0
      node_id int32 16+
      host string 16+
      port int32 16+
      rack string 16+ null default=null

ListOffsets key=2 versions=1-11 flex=6+
 request
    replica_id int32
    isolation_level int8 2+
    topics []
      name string
      partitions []
        partition_index int32
        current_leader_epoch int32 4+ default=-1
        timestamp int64
    timeout_ms int32 10+
 response
    throttle_time_ms int32 2+
    topics []
      name string
      partitions []
        partition_index int32
        error_code int16
        timestamp int64 default=-1
        offset int64 default=-1
        leader_epoch int32 4+ default=-1

Metadata key=3 versions=0-13 flex=9+
 request
    topics [] null=1+
      topic_id uuid 10+
      name string null=10+
    allow_auto_topic_creation bool 4+ default=true
    include_cluster_authorized_operations bool 8-10
    include_topic_authorized_operations bool 8+
 response
    throttle_time_ms int32 3+
    brokers []
      node_id int32
      host string
      port int32
      rack string 1+ null default=null
    cluster_id string 2+ null default=null
    controller_id int32 1+ default=-1
    topics []
      error_code int16
      name string null=12+
      topic_id uuid 10+
      is_internal bool 1+
      partitions []
        error_code int16
        partition_index int32
        leader_id int32
        leader_epoch int32 7+ default=-1
        replica_nodes []int32
        isr_nodes []int32
        offline_replicas []int32 5+
      topic_authorized_operations int32 8+ default=-2147483648
    cluster_authorized_operations int32 8-10 default=-2147483648
    error_code int16 13+ default=0

DescribeTopicPartitions key=75 versions=0-0 flex=0+
 request
    topics []
      name string
    response_partition_limit int32 default=2000
    cursor {} null default=null
      topic_name string
      partition_index int32
 response
    throttle_time_ms int32
    topics []
      error_code int16
      name string null
      topic_id uuid
      is_internal bool
      partitions []
        error_code int16
        partition_index int32
        leader_id int32
        leader_epoch int32 default=-1
        replica_nodes []int32
        isr_nodes []int32
        eligible_leader_replicas []int32 null default=null
        last_known_elr []int32 null default=null
        offline_replicas []int32
      topic_authorized_operations int32 default=-2147483648
    next_cursor {} null default=null
      topic_name string
      partition_index int32

OffsetForLeaderEpoch key=23 versions=2-4 flex=4+
 request
    replica_id int32 3+ default=-2
    topics []
      topic string
      partitions []
        partition int32
        current_leader_epoch int32 default=-1
        leader_epoch int32
 response
    throttle_time_ms int32
    topics []
      topic string
      partitions []
        error_code int16
        partition int32
        leader_epoch int32 default=-1
        end_offset int64 default=-1

ApiVersions key=18 versions=0-4 flex=3+
 request
    client_software_name string 3+
    client_software_version string 3+
 response
    error_code int16
    api_keys []
      api_key int16
      min_version int16
      max_version int16
    throttle_time_ms int32 1+
    supported_features [] 3+ tag=0
      name string 3+
      min_version int16 3+
      max_version int16 3+
    finalized_features_epoch int64 3+ tag=1 default=-1
    finalized_features [] 3+ tag=2
      name string 3+
      max_version_level int16 3+
      min_version_level int16 3+
    zk_migration_ready bool 3+ tag=3
"""
