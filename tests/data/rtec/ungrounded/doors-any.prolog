% inputs: arm/disarm/open_door/close_door/ring(D); pair(A,B)
initiatedAt(open(D)=true, T) :- happensAt(open_door(D), T).
terminatedAt(open(D)=true, T) :- happensAt(close_door(D), T).
initiatedAt(armed(D)=true, T) :- happensAt(arm(D), T).
terminatedAt(armed(D)=true, T) :- happensAt(disarm(D), T).

% ungrounded statically determined fluent
holdsFor(alarm(D)=true, I) :-
    holdsFor(open(D)=true, I1),
    holdsFor(armed(D)=true, I2),
    union_all([I1, I2], I).

% c2: complement_all over an ungrounded SDF read bound
holdsFor(nowarn(D)=true, I) :-
    holdsFor(alarm(D)=true, I1),
    complement_all([I1], I).

% c3: an ungrounded SDF read with a free argument
holdsFor(watch(D)=true, I) :-
    holdsFor(armed(D)=true, I1),
    holdsFor(alarm(_)=true, I2),
    union_all([I1, I2], I).

% c4: an ungrounded simple fluent read bound with holdsFor
initiatedAt(lit(D)=true, T) :- happensAt(open_door(D), T).
terminatedAt(lit(D)=true, T) :- happensAt(disarm(D), T).
holdsFor(dark(D)=true, I) :-
    holdsFor(armed(D)=true, I1),
    holdsFor(lit(D)=true, I2),
    relative_complement_all(I1, [I2], I).

% c5: holdsAt of an ungrounded SDF, plain and negated
initiatedAt(caught(D)=true, T) :- happensAt(close_door(D), T), holdsAt(alarm(D)=true, T).
initiatedAt(calm(D)=true, T) :- happensAt(close_door(D), T), \+ holdsAt(alarm(D)=true, T).

% c6: start/end of an ungrounded SDF
initiatedAt(rang(D)=true, T) :- happensAt(start(alarm(D)=true), T).
initiatedAt(stopped(D)=true, T) :- happensAt(end(alarm(D)=true), T).

% c8: an ungrounded derived event
happensAt(alert(D), T) :- happensAt(open_door(D), T).
initiatedAt(alerted(D)=true, T) :- happensAt(alert(D), T).

% c10: a value without grounding of a fluent whose other value is grounded
initiatedAt(mode(D)=on, T) :- happensAt(arm(D), T).
initiatedAt(mode(D)=off, T) :- happensAt(disarm(D), T).
holdsFor(offish(D)=true, I) :- holdsFor(mode(D)=off, I).

% c11: ungrounded SDF as the first literal, its free argument bound by nothing else
holdsFor(anyalarm(D)=true, I) :-
    holdsFor(alarm(D)=true, I).

dynamicDomain(door(_)).
grounding(open_door(D)) :- door(D).
grounding(close_door(D)) :- door(D).
grounding(arm(D)) :- door(D).
grounding(disarm(D)) :- door(D).
grounding(open(D)=true) :- door(D).
grounding(armed(D)=true) :- door(D).
grounding(nowarn(D)=true) :- door(D).
grounding(watch(D)=true) :- door(D).
grounding(dark(D)=true) :- door(D).
grounding(caught(D)=true) :- door(D).
grounding(calm(D)=true) :- door(D).
grounding(rang(D)=true) :- door(D).
grounding(stopped(D)=true) :- door(D).
grounding(alerted(D)=true) :- door(D).
grounding(mode(D)=_) :- door(D).
grounding(offish(D)=true) :- door(D).
grounding(anyalarm(D)=true) :- door(D).
