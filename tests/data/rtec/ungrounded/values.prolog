% inputs: arm/disarm/open_door/close_door/ping/ring(D)
initiatedAt(open(D)=true, T) :- happensAt(open_door(D), T).
terminatedAt(open(D)=true, T) :- happensAt(close_door(D), T).
initiatedAt(armed(D)=true, T) :- happensAt(arm(D), T).
terminatedAt(armed(D)=true, T) :- happensAt(disarm(D), T).
initiatedAt(seen(D)=true, T) :- happensAt(ping(D), T).

% v1: a variable value of a fluent whose only grounded value no rule defines (alarm(D)=false)
holdsFor(alarm(D)=true, I) :-
    holdsFor(open(D)=true, I1),
    holdsFor(armed(D)=true, I2),
    union_all([I1, I2], I).
holdsFor(quiet(D)=true, I) :-
    holdsFor(armed(D)=true, I1),
    holdsFor(alarm(D)=_, I2),
    relative_complement_all(I1, [I2], I).

% v2: the same with the value the rule defines grounded too (siren(D)=true computed and reported)
holdsFor(siren(D)=true, I) :-
    holdsFor(open(D)=true, I1),
    holdsFor(armed(D)=true, I2),
    union_all([I1, I2], I).
holdsFor(hushed(D)=true, I) :-
    holdsFor(armed(D)=true, I1),
    holdsFor(siren(D)=_, I2),
    relative_complement_all(I1, [I2], I).

initiatedAt(sirened(D)=true, T) :- happensAt(ping(D), T), holdsAt(siren(D)=_, T).
initiatedAt(unsirened(D)=true, T) :- happensAt(ping(D), T), \+ holdsAt(siren(D)=_, T).
initiatedAt(sirenstart(D)=true, T) :- happensAt(start(siren(D)=_), T).
initiatedAt(sirenend(D)=true, T) :- happensAt(end(siren(D)=_), T).

% v3: a simple fluent with one of its two values grounded (mode(D)=off is not)
initiatedAt(mode(D)=on, T) :- happensAt(arm(D), T).
initiatedAt(mode(D)=off, T) :- happensAt(disarm(D), T).
holdsFor(mode(D)=broken, I) :- holdsFor(open(D)=true, I).
holdsFor(anymode(D)=true, I) :- holdsFor(mode(D)=_, I).
holdsFor(unmoded(D)=true, I) :-
    holdsFor(seen(D)=true, I1),
    holdsFor(mode(D)=_, I2),
    relative_complement_all(I1, [I2], I).
initiatedAt(pinged(D)=true, T) :- happensAt(ping(D), T), holdsAt(mode(D)=_, T).
initiatedAt(idle(D)=true, T) :- happensAt(ping(D), T), \+ holdsAt(mode(D)=_, T).
initiatedAt(changed(D)=true, T) :- happensAt(start(mode(D)=_), T).
initiatedAt(ended(D)=true, T) :- happensAt(end(mode(D)=_), T).

% v4: a variable value of a fluent without grounding
initiatedAt(lit(D)=true, T) :- happensAt(open_door(D), T).
terminatedAt(lit(D)=true, T) :- happensAt(disarm(D), T).
holdsFor(unlit(D)=true, I) :-
    holdsFor(armed(D)=true, I1),
    holdsFor(lit(D)=_, I2),
    relative_complement_all(I1, [I2], I).

% v5: a grounded fluent read with a free argument, nothing of it stored (no door is rung)
initiatedAt(rang(D)=true, T) :- happensAt(ring(D), T).
holdsFor(unrung(D)=true, I) :-
    holdsFor(armed(D)=true, I1),
    holdsFor(rang(_)=true, I2),
    relative_complement_all(I1, [I2], I).

dynamicDomain(door(_)).
grounding(open_door(D)) :- door(D).
grounding(close_door(D)) :- door(D).
grounding(arm(D)) :- door(D).
grounding(disarm(D)) :- door(D).
grounding(ping(D)) :- door(D).
grounding(ring(D)) :- door(D).
grounding(open(D)=true) :- door(D).
grounding(armed(D)=true) :- door(D).
grounding(seen(D)=true) :- door(D).
grounding(alarm(D)=false) :- door(D).
grounding(quiet(D)=true) :- door(D).
grounding(siren(D)=true) :- door(D).
grounding(siren(D)=false) :- door(D).
grounding(hushed(D)=true) :- door(D).
grounding(sirened(D)=true) :- door(D).
grounding(unsirened(D)=true) :- door(D).
grounding(sirenstart(D)=true) :- door(D).
grounding(sirenend(D)=true) :- door(D).
grounding(mode(D)=on) :- door(D).
grounding(mode(D)=broken) :- door(D).
grounding(anymode(D)=true) :- door(D).
grounding(unmoded(D)=true) :- door(D).
grounding(pinged(D)=true) :- door(D).
grounding(idle(D)=true) :- door(D).
grounding(changed(D)=true) :- door(D).
grounding(ended(D)=true) :- door(D).
grounding(unlit(D)=true) :- door(D).
grounding(rang(D)=true) :- door(D).
grounding(unrung(D)=true) :- door(D).
