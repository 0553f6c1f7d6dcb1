"""Schemas of KIP-1071 streams groups: the group's heartbeat and description.

Written down from the message JSON specs packed in kafka-clients 4.3.0 (the
StreamsGroup*Data classes are generated from them) in the language of
franz/protocol/schema.py. Both APIs have only version 0, flexible. 4.3's
heartbeat carries EndpointInformationEpoch both ways, which the first specs of
KIP-1071 lacked; the heartbeat response's Status array is nullable yet reads
as empty when left out (the spec gives it no null default).
"""

SCHEMAS = """\
StreamsGroupHeartbeat key=88 versions=0 flex=0+
 request
    group_id string
    member_id string
    member_epoch int32
    endpoint_information_epoch int32
    instance_id string null default=null
    rack_id string null default=null
    rebalance_timeout_ms int32 default=-1
    topology {} null default=null
      epoch int32
      subtopologies []
        subtopology_id string
        source_topics []string
        source_topic_regex []string
        state_changelog_topics []
          name string
          partitions int32
          replication_factor int16
          topic_configs []
            key string
            value string
        repartition_sink_topics []string
        repartition_source_topics []
          name string
          partitions int32
          replication_factor int16
          topic_configs []
            key string
            value string
        copartition_groups []
          source_topics []int16
          source_topic_regex []int16
          repartition_source_topics []int16
    active_tasks [] null default=null
      subtopology_id string
      partitions []int32
    standby_tasks [] null default=null
      subtopology_id string
      partitions []int32
    warmup_tasks [] null default=null
      subtopology_id string
      partitions []int32
    process_id string null default=null
    user_endpoint {} null default=null
      host string
      port uint16
    client_tags [] null default=null
      key string
      value string
    task_offsets [] null default=null
      subtopology_id string
      partition int32
      offset int64
    task_end_offsets [] null default=null
      subtopology_id string
      partition int32
      offset int64
    shutdown_application bool default=false
 response
    throttle_time_ms int32
    error_code int16
    error_message string null default=null
    member_id string
    member_epoch int32
    heartbeat_interval_ms int32
    acceptable_recovery_lag int32
    task_offset_interval_ms int32
    status [] null
      status_code int8
      status_detail string
    active_tasks [] null default=null
      subtopology_id string
      partitions []int32
    standby_tasks [] null default=null
      subtopology_id string
      partitions []int32
    warmup_tasks [] null default=null
      subtopology_id string
      partitions []int32
    endpoint_information_epoch int32
    partitions_by_user_endpoint [] null default=null
      user_endpoint {}
        host string
        port uint16
      active_partitions []
        topic string
        partitions []int32
      standby_partitions []
        topic string
        partitions []int32

StreamsGroupDescribe key=89 versions=0 flex=0+
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
      topology {} null default=null
        epoch int32
        subtopologies [] null default=null
          subtopology_id string
          source_topics []string
          repartition_sink_topics []string
          state_changelog_topics []
            name string
            partitions int32
            replication_factor int16
            topic_configs []
              key string
              value string
          repartition_source_topics []
            name string
            partitions int32
            replication_factor int16
            topic_configs []
              key string
              value string
      members []
        member_id string
        member_epoch int32
        instance_id string null default=null
        rack_id string null default=null
        client_id string
        client_host string
        topology_epoch int32
        process_id string
        user_endpoint {} null default=null
          host string
          port uint16
        client_tags []
          key string
          value string
        task_offsets []
          subtopology_id string
          partition int32
          offset int64
        task_end_offsets []
          subtopology_id string
          partition int32
          offset int64
        assignment {}
          active_tasks []
            subtopology_id string
            partitions []int32
          standby_tasks []
            subtopology_id string
            partitions []int32
          warmup_tasks []
            subtopology_id string
            partitions []int32
        target_assignment {}
          active_tasks []
            subtopology_id string
            partitions []int32
          standby_tasks []
            subtopology_id string
            partitions []int32
          warmup_tasks []
            subtopology_id string
            partitions []int32
        is_classic bool
      authorized_operations int32 default=-2147483648
"""
