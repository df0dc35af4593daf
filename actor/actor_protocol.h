/*
 * actor_protocol.h - the actor protocol of hri, byte for byte.
 *
 * The actor server sends ActionMessages to the actor plugin over the POSIX message queue
 * "<prefix>-actor-action"; the plugin answers every physics step with a FeedbackMessage on
 * "<prefix>-actor-feedback". Each message is one fixed-size record, one record per queue
 * message. This header is the C view of actor/protocol.py (ACTION_FORMAT, FEEDBACK_FORMAT);
 * tests/test_protocol_header.py compiles it and compares every size and offset with Python.
 *
 * Byte order: every integer and every double is LITTLE-ENDIAN. Doubles are IEEE 754
 * binary64. On a little-endian host a record can be copied straight into these structs;
 * a big-endian host must swap each field.
 *
 * There is no implicit padding: every field sits at its natural alignment. The 4 bytes at
 * offset 12 put the doubles on 8-byte boundaries: in an action message the explicit padding
 * "reserved"; in a feedback message "failure" (enum hri_actor_failure: why the plugin did not
 * take an action) and 2 bytes of "reserved". Writers set "reserved" to 0; readers ignore it.
 * A reader that does not know a failure code takes it as HRI_FAILURE_NONE.
 *
 * A reader must check, in this order: the record size (HRI_ACTION_SIZE / HRI_FEEDBACK_SIZE),
 * magic, version, and that state is one of enum hri_actor_state; otherwise drop the record.
 */
#ifndef HRI_ACTOR_PROTOCOL_H
#define HRI_ACTOR_PROTOCOL_H

#include <stddef.h>
#include <stdint.h>

#define HRI_PROTOCOL_VERSION 1u
#define HRI_ACTION_MAGIC 0x41495248u   /* bytes "HRIA" read as a little-endian uint32 */
#define HRI_FEEDBACK_MAGIC 0x46495248u /* bytes "HRIF" */
#define HRI_ANIMATION_NAME_SIZE 256    /* at most 255 bytes of UTF-8 and a terminating NUL */

#define HRI_ACTION_SIZE 336
#define HRI_FEEDBACK_SIZE 88

/* The actor plugin's state (ActorPluginState of the thesis), carried in "state". */
enum hri_actor_state {
    HRI_ACTOR_SETUP = 0,     /* plugin starting, no person yet */
    HRI_ACTOR_IDLE = 1,      /* standing; in an action: stop / cancel */
    HRI_ACTOR_MOVEMENT = 2,  /* walking to a target */
    HRI_ACTOR_ANIMATION = 3  /* playing an animation in place */
};

/* Why the plugin answered an action with IDLE at progress 0, carried in a feedback's
 * "failure"; 0 in every other feedback. */
enum hri_actor_failure {
    HRI_FAILURE_NONE = 0,              /* no failure, or none given */
    HRI_FAILURE_UNKNOWN_ANIMATION = 1, /* no clip of that name */
    HRI_FAILURE_NOT_AN_ANIMATION = 2,  /* the walk cycle asked as an animation in place */
    HRI_FAILURE_INVALID_SPEED = 3,     /* animation speed not positive or not finite */
    HRI_FAILURE_NOT_WALK_CYCLE = 4,    /* a movement with another clip than the walk cycle */
    HRI_FAILURE_INVALID_STATE = 5,     /* an action to enter SETUP */
    HRI_FAILURE_BLOCKED = 6            /* a walk given up on the way: another person in the way */
};

/* Server -> plugin: the state to enter and what to do in it. 336 bytes. */
struct hri_action_message {
    uint32_t magic;    /*   0: HRI_ACTION_MAGIC */
    uint16_t version;  /*   4: HRI_PROTOCOL_VERSION */
    uint16_t state;    /*   6: enum hri_actor_state to enter (IDLE cancels the goal) */
    uint32_t sequence; /*   8: goal number given by the server, echoed in the feedback */
    uint32_t reserved; /*  12: explicit padding, 0 */
    double animation_speed;       /*  16: ANIMATION: playback speed factor;
                                          MOVEMENT: metres covered per walk cycle */
    double target_position[3];    /*  24: MOVEMENT target x, y, z (world frame, metres) */
    double target_orientation[4]; /*  48: target quaternion qx, qy, qz, qw; all 0 means
                                          "none given" (end facing the walking direction) */
    char animation_name[HRI_ANIMATION_NAME_SIZE]; /*  80: UTF-8, NUL-terminated, rest 0 */
};

/* Plugin -> server, every physics step: state, progress of the action, the person's pose,
 * and why an action failed. 88 bytes. */
struct hri_feedback_message {
    uint32_t magic;    /*   0: HRI_FEEDBACK_MAGIC */
    uint16_t version;  /*   4: HRI_PROTOCOL_VERSION */
    uint16_t state;    /*   6: enum hri_actor_state the plugin is in now */
    uint32_t sequence; /*   8: sequence of the action the plugin last took (0: none yet) */
    uint16_t failure;  /*  12: enum hri_actor_failure: why that action was not taken */
    uint16_t reserved; /*  14: explicit padding, 0 */
    double sim_time;               /*  16: simulated time of this report (seconds) */
    double progress;               /*  24: progress of the action, 0..1 */
    double current_position[3];    /*  32: person's position x, y, z (world frame, metres) */
    double current_orientation[4]; /*  56: person's quaternion qx, qy, qz, qw */
};

/* _Static_assert in C11; static_assert in C++ (a C++ plugin may include this header). */
#ifdef __cplusplus
#define HRI_STATIC_ASSERT(condition, message) static_assert(condition, message)
#else
#define HRI_STATIC_ASSERT(condition, message) _Static_assert(condition, message)
#endif

#if defined(__BYTE_ORDER__) && defined(__ORDER_LITTLE_ENDIAN__)
#if __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#warning "hri actor protocol: big-endian host; swap every field when reading or writing"
#endif
#endif

HRI_STATIC_ASSERT(sizeof(double) == 8, "double must be IEEE 754 binary64");

HRI_STATIC_ASSERT(sizeof(struct hri_action_message) == HRI_ACTION_SIZE, "action size");
HRI_STATIC_ASSERT(offsetof(struct hri_action_message, magic) == 0, "action magic");
HRI_STATIC_ASSERT(offsetof(struct hri_action_message, version) == 4, "action version");
HRI_STATIC_ASSERT(offsetof(struct hri_action_message, state) == 6, "action state");
HRI_STATIC_ASSERT(offsetof(struct hri_action_message, sequence) == 8, "action sequence");
HRI_STATIC_ASSERT(offsetof(struct hri_action_message, reserved) == 12, "action reserved");
HRI_STATIC_ASSERT(offsetof(struct hri_action_message, animation_speed) == 16, "action speed");
HRI_STATIC_ASSERT(offsetof(struct hri_action_message, target_position) == 24, "action position");
HRI_STATIC_ASSERT(offsetof(struct hri_action_message, target_orientation) == 48,
               "action orientation");
HRI_STATIC_ASSERT(offsetof(struct hri_action_message, animation_name) == 80, "action name");

HRI_STATIC_ASSERT(sizeof(struct hri_feedback_message) == HRI_FEEDBACK_SIZE, "feedback size");
HRI_STATIC_ASSERT(offsetof(struct hri_feedback_message, magic) == 0, "feedback magic");
HRI_STATIC_ASSERT(offsetof(struct hri_feedback_message, version) == 4, "feedback version");
HRI_STATIC_ASSERT(offsetof(struct hri_feedback_message, state) == 6, "feedback state");
HRI_STATIC_ASSERT(offsetof(struct hri_feedback_message, sequence) == 8, "feedback sequence");
HRI_STATIC_ASSERT(offsetof(struct hri_feedback_message, failure) == 12, "feedback failure");
HRI_STATIC_ASSERT(offsetof(struct hri_feedback_message, reserved) == 14, "feedback reserved");
HRI_STATIC_ASSERT(offsetof(struct hri_feedback_message, sim_time) == 16, "feedback sim_time");
HRI_STATIC_ASSERT(offsetof(struct hri_feedback_message, progress) == 24, "feedback progress");
HRI_STATIC_ASSERT(offsetof(struct hri_feedback_message, current_position) == 32,
               "feedback position");
HRI_STATIC_ASSERT(offsetof(struct hri_feedback_message, current_orientation) == 56,
               "feedback orientation");

#endif /* HRI_ACTOR_PROTOCOL_H */
