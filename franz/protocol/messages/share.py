"""Schemas of KIP-932 share groups: the group's heartbeat and description, the share
fetch and acknowledgement of records, and the admin's share-group offsets.

Written down from Kafka 4.3's message JSON specs in the language of
franz/protocol/schema.py. Version 0 of ShareGroupHeartbeat, ShareGroupDescribe,
ShareFetch and ShareAcknowledge was 4.0's early access and is gone from 4.1 on.
The share-group state RPCs (83-87) are the persister's calls to the share
coordinator; Kafka brokers serve them to each other ("listeners": ["broker"]).
"""

SCHEMAS = """\
ShareGroupHeartbeat key=76 versions=1 flex=0+
 request
    group_id string
    member_id string
    member_epoch int32
    rack_id string null default=null
    subscribed_topic_names []string null default=null
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

ShareGroupDescribe key=77 versions=1 flex=0+
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
        rack_id string null default=null
        member_epoch int32
        client_id string
        client_host string
        subscribed_topic_names []string
        assignment {}
          topic_partitions []
            topic_id uuid
            topic_name string
            partitions []int32
      authorized_operations int32 default=-2147483648

ShareFetch key=78 versions=1-2 flex=0+
 request
    group_id string null default=null
    member_id string null
    share_session_epoch int32
    max_wait_ms int32
    min_bytes int32
    max_bytes int32 default=2147483647
    max_records int32
    batch_size int32
    share_acquire_mode int8 2+ default=0
    is_renew_ack bool 2+ default=false
    topics []
      topic_id uuid
      partitions []
        partition_index int32
        acknowledgement_batches []
          first_offset int64
          last_offset int64
          acknowledge_types []int8
    forgotten_topics_data []
      topic_id uuid
      partitions []int32
 response
    throttle_time_ms int32
    error_code int16
    error_message string null default=null
    acquisition_lock_timeout_ms int32
    responses []
      topic_id uuid
      partitions []
        partition_index int32
        error_code int16
        error_message string null default=null
        acknowledge_error_code int16
        acknowledge_error_message string null default=null
        current_leader {}
          leader_id int32 default=0
          leader_epoch int32 default=0
        records records
        acquired_records []
          first_offset int64
          last_offset int64
          delivery_count int16
    node_endpoints []
      node_id int32
      host string
      port int32
      rack string null default=null

ShareAcknowledge key=79 versions=1-2 flex=0+
 request
    group_id string null default=null
    member_id string null
    share_session_epoch int32
    is_renew_ack bool 2+ default=false
    topics []
      topic_id uuid
      partitions []
        partition_index int32
        acknowledgement_batches []
          first_offset int64
          last_offset int64
          acknowledge_types []int8
 response
    throttle_time_ms int32
    error_code int16
    error_message string null default=null
    acquisition_lock_timeout_ms int32 2+ default=0
    responses []
      topic_id uuid
      partitions []
        partition_index int32
        error_code int16
        error_message string null default=null
        current_leader {}
          leader_id int32 default=0
          leader_epoch int32 default=0
    node_endpoints []
      node_id int32
      host string
      port int32
      rack string null default=null

DescribeShareGroupOffsets key=90 versions=0-1 flex=0+
 request
    groups []
      group_id string
      topics [] null
        topic_name string
        partitions []int32
 response
    throttle_time_ms int32
    groups []
      group_id string
      topics []
        topic_name string
        topic_id uuid
        partitions []
          partition_index int32
          start_offset int64
          leader_epoch int32
          lag int64 1+ default=-1
          error_code int16
          error_message string null default=null
      error_code int16
      error_message string null default=null

AlterShareGroupOffsets key=91 versions=0 flex=0+
 request
    group_id string
    topics []
      topic_name string
      partitions []
        partition_index int32
        start_offset int64
 response
    throttle_time_ms int32
    error_code int16
    error_message string null default=null
    responses []
      topic_name string
      topic_id uuid
      partitions []
        partition_index int32
        error_code int16
        error_message string null default=null

DeleteShareGroupOffsets key=92 versions=0 flex=0+
 request
    group_id string
    topics []
      topic_name string
 response
    throttle_time_ms int32
    error_code int16
    error_message string null default=null
    responses []
      topic_name string
      topic_id uuid
      error_code int16
      error_message string null default=null

InitializeShareGroupState key=83 versions=0 flex=0+
 request
    group_id string
    topics []
      topic_id uuid
      partitions []
        partition int32
        state_epoch int32
        start_offset int64
 response
    results []
      topic_id uuid
      partitions []
        partition int32
        error_code int16
        error_message string null default=null

ReadShareGroupState key=84 versions=0 flex=0+
 request
    group_id string
    topics []
      topic_id uuid
      partitions []
        partition int32
        leader_epoch int32
 response
    results []
      topic_id uuid
      partitions []
        partition int32
        error_code int16
        error_message string null default=null
        state_epoch int32
        start_offset int64
        state_batches []
          first_offset int64
          last_offset int64
          delivery_state int8
          delivery_count int16

WriteShareGroupState key=85 versions=0-1 flex=0+
 request
    group_id string
    topics []
      topic_id uuid
      partitions []
        partition int32
        state_epoch int32
        leader_epoch int32
        start_offset int64
        delivery_complete_count int32 1+ default=-1
        state_batches []
          first_offset int64
          last_offset int64
          delivery_state int8
          delivery_count int16
 response
    results []
      topic_id uuid
      partitions []
        partition int32
        error_code int16
        error_message string null default=null

DeleteShareGroupState key=86 versions=0 flex=0+
 request
    group_id string
    topics []
      topic_id uuid
      partitions []
        partition int32
 response
    results []
      topic_id uuid
      partitions []
        partition int32
        error_code int16
        error_message string null default=null

ReadShareGroupStateSummary key=87 versions=0-1 flex=0+
 request
    group_id string
    topics []
      topic_id uuid
      partitions []
        partition int32
        leader_epoch int32
 response
    results []
      topic_id uuid
      partitions []
        partition int32
        error_code int16
        error_message string null default=null
        state_epoch int32
        leader_epoch int32
        start_offset int64
        delivery_complete_count int32 1+ default=-1
"""
